import { Long } from 'bson'
import { Aggregator } from 'mingo'
import { isDocument } from './bson-order.js'
import type { Cursors } from './cursors.js'
import { CommandError } from './errors.js'
import { compileFilter, queryContext } from './query-operators.js'
import { compileProjection, parseSort, sortDocuments } from './sort-and-project.js'
import type { Collection, Doc, IndexSpec, Storage } from './storage.js'

export interface ServerState {
  storage: Storage
  cursors: Cursors
  /** Fail points switched on by `configureFailPoint`, as mongod's test commands do. */
  failPoints: Set<string>
  connectionId: number
}

interface Request { cmd: Doc, db: string, state: ServerState, started: number }
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

function count (value: unknown, field: string, fallback: number): number {
  if (value === undefined || value === null) return fallback
  const n = value instanceof Long ? value.toNumber() : Number(value)
  if (!Number.isInteger(n) || n < 0) throw new CommandError(2, 'BadValue', `${field} must be a non-negative integer`)
  return n
}

/** mongod checks maxTimeMS while it works: so does the scan, between documents, and once after it. */
function checkTime ({ cmd, state, started }: Request): void {
  const maxTimeMS = count(cmd.maxTimeMS, 'maxTimeMS', 0)
  if (maxTimeMS <= 0) return
  if (state.failPoints.has('maxTimeAlwaysTimeOut') || Date.now() - started > maxTimeMS) {
    throw new CommandError(50, 'MaxTimeMSExpired', 'operation exceeded time limit')
  }
}

/** How many documents are tested between two clock readings. */
const TIME_CHECK_EVERY = 32

/** The documents that pass `filter`, giving up with MaxTimeMSExpired once maxTimeMS has passed. */
function scan (request: Request, docs: Doc[], filter: unknown): Doc[] {
  const test = compileFilter(filter)
  const out: Doc[] = []
  for (let i = 0; i < docs.length; i++) {
    if (i % TIME_CHECK_EVERY === TIME_CHECK_EVERY - 1) checkTime(request)
    if (test(docs[i] as Doc)) out.push(docs[i] as Doc)
  }
  return out
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

function runPipeline (request: Request, docs: Doc[], pipeline: unknown): Doc[] {
  if (!Array.isArray(pipeline)) throw new CommandError(14, 'TypeMismatch', "'pipeline' option must be specified as an array")
  for (const stage of pipeline) {
    if (!isDocument(stage) || Object.keys(stage).length !== 1) {
      throw new CommandError(40323, 'Location40323', 'A pipeline stage specification object must contain exactly one field.')
    }
    const [name, spec] = Object.entries(stage)[0] as [string, unknown]
    if (name === '$match') docs = scan(request, docs, spec)
    else if (name === '$sort') docs = sortDocuments(docs, parseSort(spec))
    else if (name === '$skip') docs = docs.slice(count(spec, '$skip', 0))
    else if (name === '$limit') docs = docs.slice(0, count(spec, '$limit', 0))
    else if (name === '$count') docs = docs.length === 0 ? [] : [{ [String(spec)]: docs.length }]
    else if (name === '$project') docs = docs.map(compileProjection(spec))
    else if (name === '$lookup') docs = lookup(request, docs, spec)
    else if (name === '$unwind') docs = unwind(docs, spec)
    else {
      try {
        docs = new Aggregator([stage], { context: queryContext, scriptEnabled: false }).run(docs) as Doc[]
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        throw new CommandError(40324, 'Location40324', `Unrecognized or unsupported pipeline stage ${name}: ${message}`)
      }
    }
  }
  return docs
}

/**
 * `$lookup` with `from` and a `pipeline` of its own (no `localField`, `foreignField` or `let`):
 * each document gets, as `as`, what the pipeline gives on `from` (a missing collection gives []).
 */
function lookup (request: Request, docs: Doc[], spec: unknown): Doc[] {
  if (!isDocument(spec) || typeof spec.from !== 'string' || typeof spec.as !== 'string' || !Array.isArray(spec.pipeline)) {
    throw new CommandError(40321, 'Location40321', 'the offline database supports $lookup with from, pipeline and as only')
  }
  if ('localField' in spec || 'foreignField' in spec || 'let' in spec) throw new CommandError(40324, 'Location40324', '$lookup with localField, foreignField or let is not supported by the offline database')
  const from = request.state.storage.database(request.db).get(spec.from)?.docs ?? []
  const as = spec.as
  return docs.map((doc) => ({ ...doc, [as]: runPipeline(request, from, spec.pipeline) }))
}

/**
 * `$unwind` of a top-level field: one document per element of its array. With
 * `preserveNullAndEmptyArrays`, a document whose field is missing or null is kept as it is, and
 * one whose array is empty is kept without the field (manual, "$unwind"); a value that is not an
 * array counts as an array of that one value.
 */
function unwind (docs: Doc[], spec: unknown): Doc[] {
  const options = typeof spec === 'string' ? { path: spec } : spec
  if (!isDocument(options) || typeof options.path !== 'string' || !/^\$[^.$]+$/.test(options.path)) {
    throw new CommandError(28812, 'Location28812', 'the offline database supports $unwind of a top-level field only')
  }
  const field = options.path.slice(1)
  const preserve = options.preserveNullAndEmptyArrays === true
  const out: Doc[] = []
  for (const doc of docs) {
    const value = doc[field]
    if (Array.isArray(value) && value.length > 0) {
      for (const element of value) out.push({ ...doc, [field]: element })
    } else if (Array.isArray(value)) {
      if (preserve) out.push(withoutField(doc, field))
    } else if (value === undefined || value === null) {
      if (preserve) out.push(doc)
    } else {
      out.push(doc)
    }
  }
  return out
}

function withoutField (doc: Doc, field: string): Doc {
  const copy = { ...doc }
  delete copy[field]
  return copy
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
