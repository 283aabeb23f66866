// Change stream cursors: `aggregate` with a leading `$changeStream` opens one, `getMore` reads the
// oplog from where it stands up to the majority point and, when there is nothing yet, waits for a
// write up to maxTimeMS (the driver's maxAwaitTimeMS; 1 s by default, as mongod) before it
// answers an empty batch. Every batch carries a postBatchResumeToken (change-streams spec,
// "Exposing All Resume Tokens"): the point the stream has read up to, never past an event it has
// not returned ("Why do we need to expose the postBatchResumeToken?").
import { Long, calculateObjectSize } from 'bson'
import { isDocument } from './bson-order.js'
import { changeEvents, eventCount, type LookupDocument } from './change-events.js'
import type { ServerState } from './server-state.js'
import type { OplogEntry } from './oplog.js'
import { readChangeStream, type StreamSpec } from './change-stream-spec.js'
import type { StreamCursor } from './cursors.js'
import { CommandError } from './errors.js'
import { runPipeline } from './pipeline.js'
import { count, type Request } from './request.js'
import { highWaterMark, tokenOf, type StreamPosition } from './resume-token.js'
import { isPlainProjection } from './sort-and-project.js'
import type { Doc } from './storage.js'
import { cloneDeep } from './update-paths.js'

/** As for every cursor: at most 16 MiB of documents in a batch, and at least one. */
const BATCH_BYTES = 16 * 1024 * 1024
/** How many oplog entries are turned into events at a time. */
const CHUNK = 1000
/** mongod's wait for a tailable, awaitData getMore without maxTimeMS (manual: "getMore"). */
const DEFAULT_AWAIT_MS = 1000

const NON_RESUMABLE = ['NonResumableChangeStreamError']

function historyLost (): CommandError {
  return new CommandError(
    286, 'ChangeStreamHistoryLost',
    'Resume of change stream was not possible, as the resume point may no longer be in the oplog.', NON_RESUMABLE
  )
}

/**
 * The stages after `$changeStream`, under the collation the stream was opened with; each event
 * must keep its `_id`, the resume token (error 280).
 */
function applyStages (request: Request, events: Doc[], spec: StreamSpec): Doc[] {
  const { stages, collation } = spec
  if (stages.length === 0) return events
  // maxTimeMS of a getMore is the time to wait for events, not a limit on filtering them.
  const unbounded: Request = { ...request, cmd: {}, collation }
  const ownStages = stages.every((stage) =>
    '$match' in stage || ('$project' in stage && isPlainProjection(stage.$project)))
  // Other stages run through mingo, which may change the documents it is given: those get copies.
  const input = ownStages ? events : events.map(cloneDeep)
  const out = runPipeline(unbounded, input, stages)
  const tokens = new Set(events.map((event) => (event._id as Doc)._data))
  for (const event of out) {
    const id = event._id
    if (!isDocument(id) || Object.keys(id).length !== 1 || !tokens.has(id._data)) {
      throw new CommandError(
        280, 'ChangeStreamFatalError',
        'Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. ' +
          'Modifying the _id field of an event makes it impossible to resume the stream from that point. ' +
          'Only transformations that retain the unmodified _id field are allowed.',
        NON_RESUMABLE
      )
    }
  }
  return out
}

interface Batch { events: Doc[], postBatchResumeToken: Doc, invalidated: boolean }

/** The token of a position: the event just before it, or a high-water mark at a write's start. */
function tokenAt ({ at, seen }: StreamPosition): Doc {
  return seen === 0 ? highWaterMark(at) : tokenOf({ at, seen })
}

/**
 * A batch that ends before it reads anything, as mongos answers when its wait runs out (hazards): its token
 * stays.
 */
const endedEarly = (cursor: StreamCursor): Batch =>
  ({ events: [], postBatchResumeToken: cursor.token, invalidated: false })

/**
 * The postBatchResumeToken after reading to the end of the oplog: as mongod's, the token of the
 * last event returned when it came from the last write read, else a high-water mark at that
 * write's cluster time (jstests/change_streams/report_post_batch_resume_token.js: "Because the
 * retrieved event is the most recent entry in the oplog, the PBRT should be equal to the resume
 * token of the last item in the batch"; it "advances with writes to an unrelated collection").
 * Its cluster time is never past the last write, which a reader may pass as afterClusterTime.
 */
function tokenAfterReading (
  cursor: StreamCursor, lastRead: bigint | undefined, lastEvent: Doc | undefined, lastEventAt: bigint | undefined
): Doc {
  if (lastRead === undefined) return cursor.token
  // An event of that write that the stream's stages filtered out is behind the stream too.
  const candidate = lastEvent !== undefined && lastEventAt === lastRead ? lastEvent : highWaterMark(lastRead)
  return compareTokens(candidate, cursor.token) > 0 ? candidate : cursor.token
}

/** Orders two of the stand-in's tokens as mongod orders resume tokens (their hex orders them). */
const compareTokens = (a: Doc, b: Doc): number => {
  const [x, y] = [String(a._data), String(b._data)]
  return x < y ? -1 : x > y ? 1 : 0
}

/**
 * updateLookup reads at majority, after the event (mongod: DocumentSourceChangeStreamAddPostImage::
 * lookupLatestPostImage): as of the majority point while it lags, else as the document is now.
 */
function lookupAtMajority ({ hazards, oplog, storage }: ServerState): LookupDocument {
  return (db, coll, id) => {
    const live = (): Doc | undefined => storage.databases.get(db)?.get(coll)?.findById(id)
    return hazards === undefined ? live() : hazards.history.documentAt(`${db}.${coll}`, id, oplog.majorityAt, live)
  }
}

/**
 * The events after the cursor's position, at most `limit` (and 16 MiB) of them; moves the
 * position past what it read. An `invalidate` ends the batch and the stream.
 */
function readBatch (request: Request, cursor: StreamCursor, limit: number): Batch {
  const { oplog } = request.state
  if (oplog.lost(cursor.position.at)) throw historyLost()
  const { spec } = cursor
  const lookup = lookupAtMajority(request.state)
  const events: Doc[] = []
  let bytes = 0
  let lastRead: bigint | undefined
  /** The last event the writes read produced, before the stream's stages, and its write's time. */
  let lastProduced: Doc | undefined
  let lastEventAt: bigint | undefined
  const done = (batch: Batch): Batch => {
    cursor.token = batch.postBatchResumeToken
    return batch
  }
  while (events.length < limit) {
    const { at, seen } = cursor.position
    const entries = oplog.from(at, CHUNK)
    if (entries.length === 0) break
    /** Where the stream stands after each event, by the event's token. */
    const after = new Map<unknown, StreamPosition>()
    const raw: Doc[] = []
    for (const entry of entries) {
      const offset = entry.at === at ? seen : 0
      const produced = changeEvents(entry, spec, lookup, offset)
      for (const [j, event] of produced.entries()) {
        const next = offset + j + 1
        after.set(
          (event._id as Doc)._data,
          next >= offset + produced.length ? { at: entry.at + 1n, seen: 0 } : { at: entry.at, seen: next }
        )
        raw.push(event)
        lastProduced = event._id as Doc
        lastEventAt = entry.at
      }
    }
    for (const event of applyStages(request, raw, spec)) {
      const size = calculateObjectSize(event)
      if (events.length >= limit || (events.length > 0 && bytes + size > BATCH_BYTES)) {
        return done({ events, postBatchResumeToken: events[events.length - 1]?._id as Doc, invalidated: false })
      }
      events.push(event)
      bytes += size
      cursor.position = after.get((event._id as Doc)._data) as StreamPosition
      if (event.operationType === 'invalidate') {
        return done({ events, postBatchResumeToken: event._id as Doc, invalidated: true })
      }
    }
    // Read to the end of these entries: what did not pass the stages is behind the stream too.
    lastRead = (entries[entries.length - 1] as OplogEntry).at
    cursor.position = { at: lastRead + 1n, seen: 0 }
  }
  return done({
    events, postBatchResumeToken: tokenAfterReading(cursor, lastRead, lastProduced, lastEventAt), invalidated: false
  })
}

/** `aggregate` with `$changeStream`: a tailable cursor, and the events already there as its first batch. */
export function openChangeStream (request: Request): Doc {
  const { cmd, state } = request
  if (!isDocument(cmd.cursor)) throw new CommandError(9, 'FailedToParse', "The 'cursor' option is required")
  if (cmd.explain !== undefined) {
    throw new CommandError(2, 'BadValue', "the offline database does not support 'explain' with $changeStream")
  }
  // The aggregate's collation (aggregate() read it) applies to the stages after $changeStream.
  const spec = { ...readChangeStream(cmd, request.db, state.oplog), collation: request.collation }
  if (state.oplog.lost(spec.start.at)) throw historyLost()
  if (spec.mustFind !== undefined) {
    const entry = state.oplog.at(spec.mustFind.at)
    if (entry === undefined || eventCount(entry, spec.scope) < spec.mustFind.seen) {
      throw new CommandError(
        280, 'ChangeStreamFatalError',
        `cannot resume stream; the resume token was not found. ${JSON.stringify(tokenOf(spec.mustFind))}`, NON_RESUMABLE
      )
    }
  }
  // A resumed stream's first token is the one it resumed from, until it reads on (report_post_batch_resume_token.js).
  const given = (cmd.pipeline as Doc[] | undefined)?.[0]?.$changeStream as Doc | undefined
  const resumedFrom = (given?.resumeAfter ?? given?.startAfter) as Doc | undefined
  const cursor: StreamCursor = {
    id: state.cursors.newId(),
    spec,
    position: spec.start,
    token: resumedFrom ?? tokenAt(spec.start),
    killed: new AbortController(),
    busy: false
  }
  const cut = state.connectionHazards?.batchCut()
  const batch = cut === 0
    ? endedEarly(cursor)
    : readBatch(request, cursor, Math.min(count(cmd.cursor.batchSize, 'batchSize', 101), cut ?? Infinity))
  if (!batch.invalidated) state.cursors.streams.set(cursor.id.toString(), cursor)
  const id = batch.invalidated ? Long.ZERO : cursor.id
  return {
    cursor: { firstBatch: batch.events, postBatchResumeToken: batch.postBatchResumeToken, id, ns: spec.ns }, ok: 1
  }
}

function nextBatchReply (cursor: StreamCursor, batch: Batch, request: Request): Doc {
  if (batch.invalidated) request.state.cursors.streams.delete(cursor.id.toString())
  return {
    cursor: {
      nextBatch: batch.events,
      postBatchResumeToken: batch.postBatchResumeToken,
      id: batch.invalidated ? Long.ZERO : cursor.id,
      ns: cursor.spec.ns
    },
    ok: 1
  }
}

/**
 * getMore on a change stream: the events there are at once, without waiting; else the first
 * to come (to be majority-committed) within maxTimeMS; else an empty batch whose token has moved
 * on to what was read.
 */
export function streamGetMore (request: Request, cursor: StreamCursor): Doc | Promise<Doc> {
  const { cmd, state } = request
  if (cursor.busy) throw new CommandError(292, 'CursorInUse', `cursor id ${cursor.id.toString()} is already in use`)
  const batchSize = count(cmd.batchSize, 'batchSize', 0)
  // Hazards: an empty batch at once, or one cut short, however many events wait.
  const cut = state.connectionHazards?.batchCut()
  if (cut === 0) return nextBatchReply(cursor, endedEarly(cursor), request)
  const limit = Math.min(batchSize > 0 ? batchSize : Infinity, cut ?? Infinity)
  const forget = (error: unknown): never => {
    // A getMore that fails (or is interrupted) kills its cursor, as in mongod.
    state.cursors.streams.delete(cursor.id.toString())
    throw error
  }
  let batch: Batch
  try {
    batch = readBatch(request, cursor, limit)
  } catch (error) {
    return forget(error)
  }
  const wait = count(cmd.maxTimeMS, 'maxTimeMS', DEFAULT_AWAIT_MS)
  if (batch.events.length > 0 || wait === 0) return nextBatchReply(cursor, batch, request)
  cursor.busy = true
  const awaitEvents = async (): Promise<Doc> => {
    // One timer for the whole wait, on the server's clock: writes the stream does not show do not restart it.
    const expired = new AbortController()
    const cancel = state.clock.after(wait, () => { expired.abort() })
    const signal = AbortSignal.any([state.signal, cursor.killed.signal, expired.signal])
    try {
      for (;;) {
        await state.oplog.nextCommit(Infinity, signal)
        if (cursor.killed.signal.aborted) {
          throw new CommandError(237, 'CursorKilled', `cursor id ${cursor.id.toString()} was killed`)
        }
        if (state.signal.aborted) {
          throw new CommandError(91, 'ShutdownInProgress', 'the connection or the server is closing')
        }
        // Read once more when the time is up: the token moves on past what was written meanwhile.
        batch = readBatch(request, cursor, limit)
        if (batch.events.length > 0 || expired.signal.aborted) return nextBatchReply(cursor, batch, request)
      }
    } finally {
      cancel()
    }
  }
  return awaitEvents().catch(forget).finally(() => { cursor.busy = false })
}
