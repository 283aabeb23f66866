// A change stream read of its own, from a feed token's point that the shared stream's recent
// changes do not reach back to (change-hub.ts): short, bounded by the request, and closed with it.
import type { ChangeStream, Collection, Document, MongoClient } from 'mongodb'
import {
  STREAM_OPTIONS, STREAM_PIPELINE, isHistoryLost, readChange, resumeOptions, type Change
} from './change-events.js'
import { clusterTimeOf, fromTimestamp } from './cluster-time.js'
import { Gathering, type Gathered, type RecentChanges, type StreamPoint } from './recent-changes.js'
import { pause } from '../lib/pause.js'

/** What a read of its own needs of the hub's options. */
export interface StreamSource {
  collection: () => Collection<Document>
  /** The client of that collection (the read's causally consistent session). */
  client: () => MongoClient
  /** The time limit of the stream's opening `aggregate` (QUERY_TIMEOUT_MS). */
  maxTimeMS: number
  /** The collection's documents belong to projects (routing by the images' `project`). */
  scoped: boolean
}

/**
 * Every change a read looked at, of any project, and whether it caught up (quiet-reads.ts); at
 * most RECORD_LIMIT of them, where the read stops (a document changed in a tight loop).
 * `firstBatch` is told, once, what the first batch with changes held when the read goes on
 * after it: the point after them, and the changes so far.
 */
export interface ReadRecord {
  changes: Change[]
  caughtUp: boolean
  firstBatch?: (point: StreamPoint, changes: Change[]) => void
}

/** Tells `record.firstBatch`, once, where the read stands after its first batch with changes. */
function tellFirstBatch (record: ReadRecord | undefined, recent: RecentChanges, at: StreamPoint): void {
  const tell = record?.firstBatch
  if (record === undefined || tell === undefined) return
  record.firstBatch = undefined
  tell(recent.join(at), [...record.changes])
}

export const RECORD_LIMIT = 10_000

/**
 * After a batch's last event (keyed `key`), the batch's postBatchResumeToken (the driver's
 * resumeToken then) when it reaches `target`: that is how a busy collection, whose batches are
 * never empty, is seen to have caught up. An event's own token at the target time is not: more
 * events may share that cluster time (a transaction's).
 */
function batchEndPast (stream: ChangeStream, target: bigint | undefined, key: string): Document | undefined {
  if (stream.bufferedCount() > 0 || target === undefined) return undefined
  const token = stream.resumeToken as Document | null | undefined
  const reached = clusterTimeOf(token ?? undefined)
  if (token == null || reached === undefined) return undefined
  return reached > target || (reached === target && token._data !== key) ? token : undefined
}

/** Resolves with null once `signal` aborts. */
const onAbort = (signal: AbortSignal): Promise<null> => new Promise((resolve) => {
  if (signal.aborted) resolve(null)
  signal.addEventListener('abort', () => { resolve(null) }, { once: true })
})

/** What a race with a tryNext still under way gives (emptyOpening). */
const OPENED = Symbol('opened')

/** A read's opening `aggregate` answered an empty batch at `token` (emptyOpening). */
class Opened {
  constructor (readonly token: Document) {}
}

/**
 * The token the driver announces (`resumeTokenChanged`) when a stream's opening `aggregate`
 * answers an empty batch, before the getMore that the same tryNext goes on to send. A batch's
 * last event is announced too, as tryNext returns it: a turn later that tryNext (`first()`, the
 * stream's first) has settled, and nothing resolves. Used by change-hub.ts as well.
 */
export function emptyOpening (stream: ChangeStream, first: () => Promise<unknown> | undefined): Promise<Document> {
  return new Promise((resolve) => {
    stream.once('resumeTokenChanged', (announced) => {
      const token = announced as Document | null | undefined
      const opening = first()
      if (token == null || stream.bufferedCount() > 0 || opening === undefined) return
      Promise.resolve().then(async () => await Promise.race([opening, Promise.resolve(OPENED)])).then((settled) => {
        if (settled === OPENED) resolve(token)
      }, () => {})
    })
  })
}

/** The read waits this long on the server for events, then looks whether it has caught up. */
const CATCH_UP_AWAIT_MS = 10
/** And waits this long between two empty batches that have not caught up yet (an idle shard). */
const CATCH_UP_POLL_MS = 50

/**
 * The changes after `point`, as gather() finds them, read by a stream of its own from the
 * point's resume token (a point the recent changes do not reach back to), until it has caught
 * up, or has `limit` documents, or has some and `softDeadline` (ms since the epoch) has passed.
 * Caught up: a batch's postBatchResumeToken reaches the cluster time the opening `aggregate` was
 * answered at (its operationTime, through a causally consistent session); why not at an empty
 * batch: docs/changes.md, "On a replica set and a sharded cluster".
 * The `aggregate` is bounded by `maxTimeMS`, and the stream closed when the request ends. When
 * `signal` aborts first with nothing found, it throws: an answer without events must not vouch
 * for changes it did not look at. Throws MongoDB's error when the point cannot be resumed.
 */
export async function readFrom (
  source: StreamSource, recent: RecentChanges, point: StreamPoint, project: string | undefined, limit: number,
  admit: (id: unknown) => boolean, signal: AbortSignal, softDeadline = Infinity, record?: ReadRecord
): Promise<Gathered> {
  const session = source.client().startSession({ causalConsistency: true })
  const stream = source.collection().watch(STREAM_PIPELINE, {
    ...STREAM_OPTIONS,
    ...resumeOptions(point),
    batchSize: 1000,
    maxAwaitTimeMS: CATCH_UP_AWAIT_MS,
    maxTimeMS: source.maxTimeMS,
    session
  })
  const gathering = new Gathering(project, limit, admit)
  let at: StreamPoint = point
  let scanned = 0
  let caughtUp = false
  /** The cluster time every change committed before this read lies behind. */
  let target: bigint | undefined
  const aborted = onAbort(signal)
  // The last tryNext: a read caught up at its opening leaves its getMore under way.
  let pending: Promise<unknown> | undefined
  let opening: Promise<Opened> | undefined = emptyOpening(stream, () => pending).then((token) => new Opened(token))
  try {
    while (!signal.aborted && !(gathering.size > 0 && Date.now() >= softDeadline)) {
      const next = stream.tryNext()
      pending = next
      let event = await Promise.race(opening === undefined ? [next, aborted] : [next, aborted, opening])
      opening = undefined
      if (signal.aborted) break
      if (event instanceof Opened) {
        // The aggregate's own answer, its getMore not back yet: caught up, without waiting for
        // that getMore, once the empty batch's token reaches the time the aggregate was answered at.
        if (session.operationTime !== undefined) target = fromTimestamp(session.operationTime)
        const reached = clusterTimeOf(event.token)
        if (target !== undefined && reached !== undefined && reached >= target) {
          at = { ...at, resumeToken: event.token }
          caughtUp = true
          break
        }
        event = await Promise.race([next, aborted])
        if (signal.aborted) break
      }
      if (target === undefined && session.operationTime !== undefined) target = fromTimestamp(session.operationTime)
      if (event !== null) {
        scanned++
        const change = readChange(event as Document, source.scoped)
        record?.changes.push(change)
        if (change.lost) return { lost: true }
        gathering.offer(change)
        at = { resumeToken: change.token, after: change.key }
        if (gathering.size >= limit || (record !== undefined && record.changes.length >= RECORD_LIMIT)) break
        const reachedAt = batchEndPast(stream, target, change.key)
        if (reachedAt !== undefined) {
          at = { ...at, resumeToken: reachedAt }
          caughtUp = true
          break
        }
        if (stream.bufferedCount() === 0) tellFirstBatch(record, recent, at)
        continue
      }
      // An empty batch: the stream stands at its postBatchResumeToken, past what it read.
      const token = stream.resumeToken as Document | null | undefined
      if (token !== undefined && token !== null) at = { ...at, resumeToken: token }
      const reached = clusterTimeOf(token ?? undefined)
      if (target === undefined || reached === undefined || reached >= target) {
        caughtUp = true
        break
      }
      // Not caught up, but what was found is sent: its token passes no unreturned change.
      if (gathering.size > 0) break
      await pause(CATCH_UP_POLL_MS, signal)
    }
  } catch (error) {
    if (gathering.size === 0 || isHistoryLost(error)) throw error
  } finally {
    // The session ends once no command of the stream is under way (its server session is reused).
    Promise.allSettled([stream.close(), pending]).then(async () => { await session.endSession() }).catch(() => {})
  }
  if (record !== undefined) record.caughtUp = caughtUp
  if (!caughtUp && gathering.size === 0) {
    throw signal.reason ?? new DOMException('The change stream did not catch up in time', 'TimeoutError')
  }
  // No change read: the point stands where it stood (its place among the recent changes too),
  // only its resume token moved on. Else it joins the recent changes when they hold its last change.
  return gathering.at(scanned === 0 ? at : recent.join(at))
}
