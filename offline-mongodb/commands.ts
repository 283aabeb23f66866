import { Binary, Long, ObjectId, type Timestamp } from 'bson'
import { isDocument } from './bson-order.js'
import { isChangeStream } from './change-stream-spec.js'
import { openChangeStream, streamGetMore } from './change-streams.js'
import { CommandError } from './errors.js'
import { hazardsCommand } from './hazards-command.js'
import { helloReply } from './hello.js'
import { runPipeline } from './pipeline.js'
import { compileFilter } from './query-operators.js'
import { underConcerns } from './read-write-concern.js'
import { checkTime, collectionDocuments, collectionName, count, scan, useCollation, type Request } from './request.js'
import { compileProjection, parseSort, sortDocuments } from './sort-and-project.js'
import type { OpCounters, ServerState } from './server-state.js'
import type { Collection, Doc } from './storage.js'
import { INDEX_COMMANDS } from './index-commands.js'
import { WRITE_COMMANDS } from './write-commands.js'

type Handler = (request: Request) => Doc | Promise<Doc>

function hello ({ state }: Request): Doc {
  return helloReply(state.connectionId, state.member)
}

function documentsOf (request: Request, key: string): { collection: Collection | undefined, ns: string } {
  const name = collectionName(request.cmd, key)
  return { collection: request.state.storage.database(request.db).get(name), ns: `${request.db}.${name}` }
}

/**
 * The documents a filter can only match when it fixes `_id` to ObjectIds or strings (`_id: v`,
 * `_id: {$in: [...]}`, at the top or inside a top-level `$and`), found through the `_id` index
 * as mongod would: the feeds read changed documents again by their ids, and a scan of every
 * document per answer is what the stand-in cannot afford. The whole filter still decides. Under a
 * collation, string ids go by the scan: the `_id` index is binary, and strings the collation
 * calls equal would be missed (collation.js: `{_id: "FOO"}` finds "foo" at strength 2).
 */
function byIdIndex (collection: Collection, filter: unknown, collated: boolean): Doc[] | undefined {
  if (!isDocument(filter)) return undefined
  const indexable = (value: unknown): boolean => value instanceof ObjectId || (!collated && typeof value === 'string')
  const fixed = (condition: unknown): unknown[] | undefined => {
    if (indexable(condition)) return [condition]
    if (!isDocument(condition) || Object.keys(condition).length !== 1 || !Array.isArray(condition.$in)) return undefined
    return condition.$in.every(indexable) ? condition.$in : undefined
  }
  let ids = '_id' in filter ? fixed(filter._id) : undefined
  if (ids === undefined && Array.isArray(filter.$and)) {
    for (const part of filter.$and) if (ids === undefined && isDocument(part) && '_id' in part) ids = fixed(part._id)
  }
  if (ids === undefined) return undefined
  const found = new Set(ids.map((id) => collection.findById(id)).filter((doc) => doc !== undefined))
  // In the collection's natural order, as a scan would give them.
  return found.size === 0 ? [] : collection.docs.filter((doc) => found.has(doc))
}

function find (request: Request): Doc {
  const { cmd } = request
  const { collection, ns } = documentsOf(request, 'find')
  const collation = useCollation(request, 'find')
  const sort = parseSort(cmd.sort)
  const project = compileProjection(cmd.projection)
  const skip = count(cmd.skip, 'skip', 0)
  const limit = count(cmd.limit, 'limit', 0)
  const candidates = request.readAt !== undefined
    ? collectionDocuments(request, collectionName(cmd, 'find'))
    : collection === undefined ? [] : byIdIndex(collection, cmd.filter, collation !== undefined) ?? collection.docs
  let docs = sortDocuments(scan(request, candidates, cmd.filter), sort, collation?.compare)
  docs = docs.slice(skip, limit > 0 ? skip + limit : undefined)
  checkTime(request)
  return request.state.cursors.firstBatch(
    ns, docs.map(project), count(cmd.batchSize, 'batchSize', 101), cmd.singleBatch === true
  )
}

function aggregate (request: Request): Doc {
  const { cmd } = request
  useCollation(request, 'aggregate')
  if (isChangeStream(cmd.pipeline)) return openChangeStream(request)
  if (Array.isArray(cmd.pipeline) && cmd.pipeline.some((stage) => isDocument(stage) && '$changeStream' in stage)) {
    throw new CommandError(40602, 'Location40602', '$changeStream is only valid as the first stage in a pipeline.')
  }
  const name = collectionName(cmd, 'aggregate')
  if (!isDocument(cmd.cursor)) throw new CommandError(9, 'FailedToParse', "The 'cursor' option is required")
  const docs = runPipeline(request, collectionDocuments(request, name), cmd.pipeline)
  checkTime(request)
  return request.state.cursors.firstBatch(`${request.db}.${name}`, docs, count(cmd.cursor.batchSize, 'batchSize', 101))
}

function countCommand (request: Request): Doc {
  const { cmd } = request
  const name = collectionName(cmd, 'count')
  useCollation(request, 'count')
  const skip = count(cmd.skip, 'skip', 0)
  const limit = count(cmd.limit, 'limit', 0)
  const matched = scan(request, collectionDocuments(request, name), cmd.query).length
  checkTime(request)
  return { n: Math.max(0, Math.min(matched - skip, limit > 0 ? limit : Infinity)), ok: 1 }
}

function getMore (request: Request): Doc | Promise<Doc> {
  const { cmd } = request
  const id = cmd.getMore
  if (!(id instanceof Long)) throw new CommandError(14, 'TypeMismatch', 'getMore id must be a long')
  const ns = `${request.db}.${collectionName(cmd, 'collection')}`
  const stream = request.state.cursors.streams.get(id.toString())
  if (stream !== undefined && stream.spec.ns === ns) return streamGetMore(request, stream)
  const batch = request.state.cursors.nextBatch(
    id, ns, cmd.batchSize === undefined ? undefined : count(cmd.batchSize, 'batchSize', 0)
  )
  if (batch === undefined) throw new CommandError(43, 'CursorNotFound', `cursor id ${id.toString()} not found`)
  return batch
}

function listCollections (request: Request): Doc {
  const db = request.state.storage.database(request.db)
  // mongod lists the option once it was set (create or collMod); here images are on unless switched off.
  const infos = [...db.collections.entries()].map(([name, collection]) => ({
    name,
    type: 'collection',
    options: { changeStreamPreAndPostImages: { enabled: collection.recordsImages } },
    info: { readOnly: false, uuid: collection.uuid },
    idIndex: { v: 2, key: { _id: 1 }, name: '_id_' }
  }))
  return request.state.cursors.firstBatch(
    `${request.db}.$cmd.listCollections`, infos.filter(compileFilter(request.cmd.filter)), undefined
  )
}

function listDatabases ({ state }: Request): Doc {
  const databases = [...state.storage.databases.values()]
    .filter((db) => db.collections.size > 0)
    .map((db) => ({ name: db.name, sizeOnDisk: 0, empty: false }))
  return { databases, totalSize: 0, ok: 1 }
}

function configureFailPoint ({ cmd, db, state }: Request): Doc {
  if (db !== 'admin') {
    throw new CommandError(13, 'Unauthorized', 'configureFailPoint may only be run against the admin database.')
  }
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
  buildInfo: () => ({
    version: '7.0.0',
    gitVersion: 'offline-mongodb',
    versionArray: [7, 0, 0, 0],
    bits: 64,
    maxBsonObjectSize: 16 * 1024 * 1024,
    ok: 1
  }),
  listDatabases,
  listCollections,
  ...WRITE_COMMANDS,
  find,
  getMore,
  killCursors: ({ cmd, state }) => state.cursors.kill(Array.isArray(cmd.cursors) ? cmd.cursors as Long[] : []),
  aggregate,
  count: countCommand,
  ...INDEX_COMMANDS,
  endSessions: () => ({ ok: 1 }),
  configureFailPoint,
  serverStatus,
  offlineHazards: hazardsCommand
}

/** `$clusterTime` is signed by mongod; a server without keys signs with zeros and key 0. */
const SIGNATURE = { hash: new Binary(Buffer.alloc(20), 0), keyId: Long.ZERO }

/** The `$clusterTime` of the latest write, made again only when there was a write since. */
let gossip: { at: bigint, time: Timestamp, clusterTime: Doc } | undefined

/**
 * Every reply of a replica set member carries `operationTime` and `$clusterTime` (manual:
 * "Causal Consistency"; change-streams spec, "Response Format"): the latest write's time.
 */
function withClusterTime (reply: Doc, state: ServerState): Doc {
  const at = state.oplog.lastAt
  if (gossip?.at !== at) {
    const time = state.oplog.lastTime
    gossip = { at, time, clusterTime: { clusterTime: time, signature: SIGNATURE } }
  }
  // A majority read's is the majority point it read at (read-write-concern.ts).
  reply.operationTime ??= gossip.time
  reply.$clusterTime = gossip.clusterTime
  return reply
}

function errorReply (error: unknown): Doc {
  if (error instanceof CommandError) {
    return {
      ok: 0,
      errmsg: error.message,
      code: error.code,
      codeName: error.codeName,
      ...(error.labels === undefined ? {} : { errorLabels: error.labels })
    }
  }
  const message = error instanceof Error ? error.message : String(error)
  return { ok: 0, errmsg: `offline database error: ${message}`, code: 1, codeName: 'InternalError' }
}

/**
 * serverStatus's opcounters: a find is a query, a getMore a getmore, writes count their documents
 * or statements, and every other command (aggregate, killCursors, hello…) is a command.
 */
function countOperation (name: string, cmd: Doc, counters: OpCounters): void {
  const items = (key: string): number => Array.isArray(cmd[key]) ? cmd[key].length : 0
  switch (name) {
    case 'find': counters.query++; break
    case 'getMore': counters.getmore++; break
    case 'insert': counters.insert += items('documents'); break
    case 'update': counters.update += items('updates'); break
    case 'delete': counters.delete += items('deletes'); break
    default: counters.command++
  }
}

/** serverStatus, as far as the stand-in keeps it: the process and its operation counters. */
function serverStatus (request: Request): Doc {
  return {
    host: 'offline-mongodb',
    version: '8.0.0',
    process: 'mongod',
    uptime: process.uptime(),
    opcounters: { ...request.state.opcounters },
    ok: 1
  }
}

/** Runs one command; a Promise only for a command that waits (a change stream's getMore). */
export function runCommand (cmd: Doc, state: ServerState): Doc | Promise<Doc> {
  const name = Object.keys(cmd)[0] ?? ''
  countOperation(name, cmd, state.opcounters)
  const db = typeof cmd.$db === 'string' ? cmd.$db : 'admin'
  try {
    const handler = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
    if (handler === undefined) throw new CommandError(59, 'CommandNotFound', `no such command: '${name}'`)
    // A transaction's writes would otherwise be applied at once, and its abort would undo nothing.
    // (Not IllegalOperation: the driver reads that code on a write as "no retryable writes".)
    if (cmd.autocommit !== undefined || cmd.startTransaction !== undefined) {
      throw new CommandError(
        263, 'OperationNotSupportedInTransaction', 'the offline database does not support transactions'
      )
    }
    const request: Request = { cmd, db, state, started: Date.now() }
    const reply = underConcerns(request, name, () => handler(request))
    if (reply instanceof Promise) {
      return reply.then(
        (done) => withClusterTime(done, state),
        (error: unknown) => withClusterTime(errorReply(error), state)
      )
    }
    return withClusterTime(reply, state)
  } catch (error) {
    return withClusterTime(errorReply(error), state)
  }
}
