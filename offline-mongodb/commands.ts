import { Long } from 'bson'
import { isDocument } from './bson-order.js'
import type { Cursors } from './cursors.js'
import { CommandError } from './errors.js'
import { runPipeline } from './pipeline.js'
import { compileFilter } from './query-operators.js'
import { checkTime, count, scan, type Request } from './request.js'
import { compileProjection, parseSort, sortDocuments } from './sort-and-project.js'
import type { Collection, Doc, IndexSpec, Storage } from './storage.js'

export interface ServerState {
  storage: Storage
  cursors: Cursors
  /** Fail points switched on by `configureFailPoint`, as mongod's test commands do. */
  failPoints: Set<string>
  connectionId: number
}

type Handler = (request: Request) => Doc

const MAX_WIRE_VERSION = 21

/** The handshake reply of a standalone primary (also answered by the benchmark's replay database). */
export function helloReply (connectionId: number): Doc {
  return {
    helloOk: true,
    ismaster: true,
    isWritablePrimary: true,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1
  }
}

function hello ({ state }: Request): Doc {
  return helloReply(state.connectionId)
}

function collectionName (cmd: Doc, key: string): string {
  const name = cmd[key]
  if (typeof name !== 'string') throw new CommandError(73, 'InvalidNamespace', `collection name has invalid type ${typeof name}`)
  return name
}

function documentsOf (request: Request, key: string): { collection: Collection | undefined, ns: string } {
  const name = collectionName(request.cmd, key)
  return { collection: request.state.storage.database(request.db).get(name), ns: `${request.db}.${name}` }
}

function find (request: Request): Doc {
  const { cmd } = request
  const { collection, ns } = documentsOf(request, 'find')
  const sort = parseSort(cmd.sort)
  const project = compileProjection(cmd.projection)
  const skip = count(cmd.skip, 'skip', 0)
  const limit = count(cmd.limit, 'limit', 0)
  let docs = sortDocuments(scan(request, collection?.docs ?? [], cmd.filter), sort)
  docs = docs.slice(skip, limit > 0 ? skip + limit : undefined)
  checkTime(request)
  return request.state.cursors.firstBatch(ns, docs.map(project), count(cmd.batchSize, 'batchSize', 101), cmd.singleBatch === true)
}

function aggregate (request: Request): Doc {
  const { cmd } = request
  const { collection, ns } = documentsOf(request, 'aggregate')
  if (!isDocument(cmd.cursor)) throw new CommandError(9, 'FailedToParse', "The 'cursor' option is required")
  const docs = runPipeline(request, collection?.docs ?? [], cmd.pipeline)
  checkTime(request)
  return request.state.cursors.firstBatch(ns, docs, count(cmd.cursor.batchSize, 'batchSize', 101))
}

function countCommand (request: Request): Doc {
  const { cmd } = request
  const { collection } = documentsOf(request, 'count')
  const skip = count(cmd.skip, 'skip', 0)
  const limit = count(cmd.limit, 'limit', 0)
  const matched = scan(request, collection?.docs ?? [], cmd.query).length
  checkTime(request)
  return { n: Math.max(0, Math.min(matched - skip, limit > 0 ? limit : Infinity)), ok: 1 }
}

function getMore (request: Request): Doc {
  const { cmd } = request
  const id = cmd.getMore
  if (!(id instanceof Long)) throw new CommandError(14, 'TypeMismatch', 'getMore id must be a long')
  const ns = `${request.db}.${collectionName(cmd, 'collection')}`
  const batch = request.state.cursors.nextBatch(id, ns, cmd.batchSize === undefined ? undefined : count(cmd.batchSize, 'batchSize', 0))
  if (batch === undefined) throw new CommandError(43, 'CursorNotFound', `cursor id ${id.toString()} not found`)
  return batch
}

function insert (request: Request): Doc {
  const { cmd } = request
  const collection = request.state.storage.database(request.db).getOrCreate(collectionName(cmd, 'insert'))
  const documents = Array.isArray(cmd.documents) ? cmd.documents as Doc[] : []
  const writeErrors: Doc[] = []
  let n = 0
  for (const [index, doc] of documents.entries()) {
    try {
      collection.insert(doc)
      n++
    } catch (error) {
      if (!(error instanceof CommandError)) throw error
      writeErrors.push({ index, code: error.code, errmsg: error.message })
      if (cmd.ordered !== false) break
    }
  }
  return writeErrors.length > 0 ? { n, writeErrors, ok: 1 } : { n, ok: 1 }
}

function deleteCommand (request: Request): Doc {
  const { cmd } = request
  const { collection } = documentsOf(request, 'delete')
  let n = 0
  for (const statement of Array.isArray(cmd.deletes) ? cmd.deletes as Doc[] : []) {
    if (collection === undefined) break
    const matches = collection.docs.filter(compileFilter(statement.q))
    for (const doc of Number(statement.limit) === 1 ? matches.slice(0, 1) : matches) {
      collection.remove(doc)
      n++
    }
  }
  return { n, ok: 1 }
}

function createIndexes (request: Request): Doc {
  const { cmd } = request
  const collection = request.state.storage.database(request.db).getOrCreate(collectionName(cmd, 'createIndexes'))
  const numIndexesBefore = collection.indexes.length
  if (!Array.isArray(cmd.indexes) || cmd.indexes.length === 0) throw new CommandError(2, 'BadValue', 'Must specify at least one index to create')
  for (const spec of cmd.indexes as IndexSpec[]) {
    if (!isDocument(spec.key) || Object.keys(spec.key).length === 0) throw new CommandError(67, 'CannotCreateIndex', 'index key must be a non-empty object')
    if (typeof spec.name !== 'string') throw new CommandError(9, 'FailedToParse', 'index name must be a string')
    const { v: _version, key, name, ...options } = spec
    collection.createIndex({ v: 2, key, name, ...options })
  }
  return { numIndexesBefore, numIndexesAfter: collection.indexes.length, createdCollectionAutomatically: numIndexesBefore === 1 && collection.docs.length === 0, ok: 1 }
}

function listIndexes (request: Request): Doc {
  const { collection, ns } = documentsOf(request, 'listIndexes')
  if (collection === undefined) throw new CommandError(26, 'NamespaceNotFound', `ns does not exist: ${ns}`)
  return request.state.cursors.firstBatch(ns, collection.indexes.map((i) => ({ ...i })), undefined)
}

function listCollections (request: Request): Doc {
  const db = request.state.storage.database(request.db)
  const infos = [...db.collections.keys()].map((name) => ({
    name, type: 'collection', options: {}, info: { readOnly: false }, idIndex: { v: 2, key: { _id: 1 }, name: '_id_' }
  }))
  return request.state.cursors.firstBatch(`${request.db}.$cmd.listCollections`, infos.filter(compileFilter(request.cmd.filter)), undefined)
}

function listDatabases ({ state }: Request): Doc {
  const databases = [...state.storage.databases.values()]
    .filter((db) => db.collections.size > 0)
    .map((db) => ({ name: db.name, sizeOnDisk: 0, empty: false }))
  return { databases, totalSize: 0, ok: 1 }
}

function configureFailPoint ({ cmd, db, state }: Request): Doc {
  if (db !== 'admin') throw new CommandError(13, 'Unauthorized', 'configureFailPoint may only be run against the admin database.')
  const name = String(cmd.configureFailPoint)
  if (name !== 'maxTimeAlwaysTimeOut') throw new CommandError(2, 'BadValue', `Unknown fail point: ${name}`)
  if (cmd.mode === 'off') state.failPoints.delete(name)
  else state.failPoints.add(name)
  return { count: 0, ok: 1 }
}

export const COMMANDS: Record<string, Handler> = {
  hello,
  ismaster: hello,
  isMaster: hello,
  ping: () => ({ ok: 1 }),
  buildInfo: () => ({ version: '7.0.0', gitVersion: 'offline-mongodb', versionArray: [7, 0, 0, 0], bits: 64, maxBsonObjectSize: 16 * 1024 * 1024, ok: 1 }),
  listDatabases,
  listCollections,
  insert,
  find,
  getMore,
  killCursors: ({ cmd, state }) => state.cursors.kill(Array.isArray(cmd.cursors) ? cmd.cursors as Long[] : []),
  aggregate,
  count: countCommand,
  createIndexes,
  listIndexes,
  delete: deleteCommand,
  drop: ({ cmd, db, state }) => {
    state.storage.database(db).collections.delete(collectionName(cmd, 'drop'))
    return { ns: `${db}.${String(cmd.drop)}`, nIndexesWas: 1, ok: 1 }
  },
  dropDatabase: ({ db, state }) => {
    state.storage.databases.delete(db)
    return { dropped: db, ok: 1 }
  },
  endSessions: () => ({ ok: 1 }),
  configureFailPoint
}

export function runCommand (cmd: Doc, state: ServerState): Doc {
  const name = Object.keys(cmd)[0] ?? ''
  const db = typeof cmd.$db === 'string' ? cmd.$db : 'admin'
  try {
    const handler = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
    if (handler === undefined) throw new CommandError(59, 'CommandNotFound', `no such command: '${name}'`)
    return handler({ cmd, db, state, started: Date.now() })
  } catch (error) {
    if (error instanceof CommandError) return { ok: 0, errmsg: error.message, code: error.code, codeName: error.codeName }
    const message = error instanceof Error ? error.message : String(error)
    return { ok: 0, errmsg: `offline database error: ${message}`, code: 1, codeName: 'InternalError' }
  }
}
