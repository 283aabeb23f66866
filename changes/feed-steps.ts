// A feed's step engine: one answer's worth read from a position, a page of the listing or the
// changes after its point, with the changed documents read again by the feed's own filter and
// fields so that MongoDB decides what matches (feed-handler.ts serves the answers).
import type { TObject } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { BSON, ObjectId, type CollationOptions, type Document, type ReadPreferenceMode } from 'mongodb'
import { parseCollation } from '../database/collation.js'
import { FEED_MAX_LIMIT } from '../list-query/compile-list-query.js'
import { EXACT_VALUES } from '../list-endpoint/cursor.js'
import { keysetFilter } from '../list-endpoint/keyset.js'
import { bsonToJson, type Transcoder } from '../list-endpoint/bson-json.js'
import { decodeFields, type Page } from '../list-endpoint/bson-page.js'
import { leadingObjectIdAt } from '../list-endpoint/bson-plan.js'
import { findPage, type PageQuery } from '../list-endpoint/find-page.js'
import type { Misfit } from '../list-endpoint/off-schema.js'
import type { ChangeHub } from './change-hub.js'
import { clusterTimeOf } from './cluster-time.js'
import { expired, feedError } from './feed-problems.js'
import { readAtOrAfter } from './feed-reads.js'
import { QuietReads, changesAfter } from './quiet-reads.js'
import type { ReadRecord } from './stream-read.js'
import type { FeedPosition } from './feed-token.js'
import { idText, type Gathered, type StreamPoint } from './recent-changes.js'

/**
 * One answer of a feed: its events (each as its JSON text, written from the documents' BSON
 * without decoding them), its next position, and whether the listing is complete.
 */
export interface FeedStep { events: string[], position: FeedPosition, synced: boolean, committedAt: number[] }

/** Why a document left a feed: it no longer exists, no longer matches, or is in another project now. */
export type RemoveReason = 'deleted' | 'unmatched' | 'moved'

interface Removal { id: unknown, reason: RemoveReason }

/**
 * The `_id` of a page's document `index`: read in place when it is an ObjectId (stored first, as
 * MongoDB does), else decoded.
 */
function idAt (page: Page, index: number): unknown {
  const { bytes } = page
  const at = page.starts[index] as number
  if (leadingObjectIdAt(bytes, at)) return ObjectId.createFromHexString(bytes.toString('hex', at + 9, at + 21))
  return decodeFields(page, index, ['_id'], EXACT_VALUES)._id
}

const isEvent = (event: string | undefined): event is string => event !== undefined

/**
 * The cluster time a read must be at or after to see every change behind `point`. An event's
 * token stands at its change. A postBatchResumeToken (a high-water mark) stands before the
 * events at its time: everything earlier is behind it, and its time may be one past the
 * cluster time (a new stream starts there), which `afterClusterTime` must not exceed.
 */
export function readTime (point: StreamPoint): bigint | undefined {
  const time = clusterTimeOf(point.resumeToken)
  if (time === undefined || point.after === point.resumeToken._data) return time
  const last = point.after === undefined ? undefined : clusterTimeOf({ _data: point.after })
  return last !== undefined && last > time - 1n ? last : time - 1n
}

/** Up to this many changed documents, why one left is read beside them, not after (readAgain). */
const STATES_BESIDE = 20

/** Why the removes of `ids` that a page lacks happened, by the id's text. */
type Reasons = Map<string, Removal>

/** Reads the answers of the feed of one collection, whose kind is `schema`. */
export class FeedSteps {
  private readonly quiet = new WeakMap<ChangeHub, QuietReads>()
  /** Whether a document is in the feed is decided in the lists' collation, as a list would decide it. */
  private readonly collation: CollationOptions | undefined
  private readonly transcode: Transcoder
  /**
   * Reads of changed documents under way, by query and by the point they read at or after:
   * requests woken by the same change (every waiting follower of a project with the same filter
   * and fields) share one read. A request never joins a read of an older point, which may have
   * begun before a change it has gathered and would move its token past that change with the
   * older state.
   */
  private readonly reading = new Map<string, Promise<{ page: Page, pageIds: unknown[], reasons: Reasons }>>()

  constructor (private readonly fastify: FastifyInstance, private readonly collection: string, schema: TObject) {
    this.collation = parseCollation(fastify.config.COLLATION)
    this.transcode = bsonToJson(schema, fastify.keptDocuments)
  }

  /**
   * Reads one answer's worth from `position`: a page of the listing, or the changes after its
   * point; within `budget`'s deadline when given (a request's first step, the one that vouches
   * for the time the request began), else its own. A listing reads on after its page only once
   * `passed` has (the request's checks, when the page was read beside them).
   */
  async step (
    request: FastifyRequest, hub: ChangeHub, where: Document, read: Document, position: FeedPosition, limit: number,
    project: string | undefined, admit: (id: unknown) => boolean, budget?: FastifyRequest, passed?: Promise<unknown>
  ): Promise<FeedStep> {
    return await this.fastify.database.bounded(async (signal) => {
      if (position.phase === 'listing') {
        const filter = position.lastId === undefined
          ? where
          : { $and: [where, keysetFilter({ _id: 1 }, [position.lastId])] }
        // At or after the point the changes are followed from: no change before it is missed.
        const page = await this.readAt(readTime(position.start), {
          filter, sort: { _id: 1 }, projection: read, skip: 0, limit: limit + 1
        }, signal)
        const more = page.starts.length > limit
        const events = this.upserts(request, page, Math.min(limit, page.starts.length)).filter(isEvent)
        if (more) {
          return {
            events,
            position: { phase: 'listing', start: position.start, lastId: idAt(page, limit - 1) },
            synced: false,
            committedAt: []
          }
        }
        // The listing is complete. Without events this answer would say "nothing left", yet the
        // changes made while it was read (documents that left the filter before the last page
        // reached them) come after its start: they are read now, as a following answer would.
        if (events.length > 0) {
          return { events, position: { phase: 'following', point: position.start }, synced: true, committedAt: [] }
        }
        await passed
        return await this.follow(request, hub, where, read, position.start, limit, project, admit, signal, budget)
      }
      return await this.follow(request, hub, where, read, position.point, limit, project, admit, signal, budget)
    }, budget)
  }

  /**
   * The changes after `point`, from the recent changes or a stream of its own, read again by the
   * feed's filter and fields.
   */
  private async follow (
    request: FastifyRequest, hub: ChangeHub, where: Document, read: Document, point: StreamPoint, limit: number,
    project: string | undefined, admit: (id: unknown) => boolean, signal: AbortSignal, budget?: FastifyRequest
  ): Promise<FeedStep> {
    const { QUERY_TIMEOUT_MS } = this.fastify.config
    const from = hub.locate(point)
    let gathered: Gathered
    try {
      // A read of its own leaves half the time left to read the documents again.
      const left = budget === undefined
        ? QUERY_TIMEOUT_MS
        : Math.min(QUERY_TIMEOUT_MS, budget.databaseDeadline - Date.now())
      const soft = Date.now() + Math.max(0, left) / 2
      gathered = from === undefined
        ? await hub.readFrom(point, project, limit, admit, signal, soft)
        : hub.gather(from, project, limit, admit)
      // The shared stream brings a change a moment after its commit: before an answer says
      // "nothing", what it has not brought yet is read directly, so that an answer without
      // events is as current as the request.
      // Steps confirming the same point share one read, and take their changes from it (quiet-reads.ts).
      // Only a request's first step (the one given its budget) vouches for the time the request
      // began: after a wait, or in a stream, that is done, and the recent changes answer.
      if (from !== undefined && budget !== undefined && !gathered.lost && gathered.ids.length === 0) {
        const wants = { project, limit, admit, join: (at: StreamPoint) => hub.join(at) }
        gathered = await changesAfter(hub, this.quietOf(hub), gathered.point, wants, signal) ??
          await hub.readFrom(gathered.point, project, limit, admit, signal, soft)
      }
    } catch (error) {
      throw feedError(error)
    }
    if (gathered.lost) throw expired()
    // At or after the point the answer moves to, which stands after every change it gathered.
    const found = await this.readAgain(request, where, read, gathered.ids, project, readTime(gathered.point), signal)
    const events = gathered.ids.map((id) => found.get(idText(id)) as string)
    return {
      events, position: { phase: 'following', point: gathered.point }, synced: true, committedAt: gathered.committedAt
    }
  }

  private quietOf (hub: ChangeHub): QuietReads {
    let reads = this.quiet.get(hub)
    if (reads === undefined) {
      // Bounded as a request is: it serves requests that arrived up to JOIN_MS before it began.
      reads = new QuietReads(async (point, firstBatch) => await this.fastify.database.bounded(async (signal) => {
        const record: ReadRecord = {
          changes: [],
          caughtUp: false,
          firstBatch: (at, changes) => { firstBatch({ lost: false, point: at, changes, caughtUp: false }) }
        }
        const gathered = await hub.readFrom(point, undefined, FEED_MAX_LIMIT, () => true, signal, Infinity, record)
        return gathered.lost ? gathered : { lost: false, point: gathered.point, ...record }
      }))
      this.quiet.set(hub, reads)
    }
    return reads
  }

  /** Runs a feed's `find` at majority, at or after the cluster time `time` (feed-reads.ts). */
  private async readAt (time: bigint | undefined, query: PageQuery, signal: AbortSignal): Promise<Page> {
    const { fastify, collection, collation } = this
    const { QUERY_TIMEOUT_MS, CHANGES_READ_PREFERENCE } = fastify.config
    return await fastify.database.timed('find', () =>
      readAtOrAfter(fastify.database.db().client, time, CHANGES_READ_PREFERENCE as ReadPreferenceMode,
        async (options) => await findPage(
          fastify.database.db(), collection, collation === undefined ? query : { ...query, collation },
          { maxTimeMS: QUERY_TIMEOUT_MS, signal, ...options }
        )))
  }

  /**
   * Why the documents among `ids` that a page (whose ids are `pageIds`) lacks left the feed
   * (docs/changes.md, "What the events mean"), from the same state: read by `_id` alone, their
   * project and nothing else.
   * Not found: deleted; in the feed's project (or, for /projects, existing): unmatched; else moved.
   */
  private async reasonsFor (
    pageIds: unknown[], ids: unknown[], project: string | undefined, time: bigint | undefined, signal: AbortSignal,
    read?: Promise<Page>
  ): Promise<Reasons> {
    const reasons: Reasons = new Map()
    const kept = new Set(pageIds.map(idText))
    const missing = ids.filter((id) => !kept.has(idText(id)))
    for (const id of missing) reasons.set(idText(id), { id, reason: 'deleted' })
    if (missing.length === 0) return reasons
    const states = await (read ?? this.statesOf(missing, time, signal))
    for (let i = 0; i < states.starts.length; i++) {
      const { _id: id, project: owner } = decodeFields(states, i, ['_id', 'project'], EXACT_VALUES)
      const removal = reasons.get(idText(id))
      if (removal !== undefined) {
        removal.reason = project === undefined || (owner instanceof ObjectId && owner.toHexString() === project)
          ? 'unmatched'
          : 'moved'
      }
    }
    return reasons
  }

  /** The `_id` and `project` of the documents among `ids`, at or after `time`. */
  private async statesOf (ids: unknown[], time: bigint | undefined, signal: AbortSignal): Promise<Page> {
    const [filter, projection] = [{ _id: { $in: ids } }, { _id: 1, project: 1 }]
    return await this.readAt(time, { filter, sort: { _id: 1 }, projection, skip: 0, limit: ids.length + 1 }, signal)
  }

  /**
   * The documents among `ids` that the feed's where matches at or after `time`, as upsert
   * events' JSON by their id's text, and the others as removes with their reason.
   */
  private async readAgain (
    request: FastifyRequest, where: Document, read: Document, ids: unknown[], project: string | undefined,
    time: bigint | undefined, signal: AbortSignal
  ): Promise<Map<string, string>> {
    const found = new Map<string, string>()
    if (ids.length === 0) return found
    const filter = { $and: [where, { _id: { $in: ids } }] }
    const key = `${BSON.EJSON.stringify({ where, read }, { relaxed: false })} ${String(project)} ` +
      `${ids.map(idText).join(',')} @${String(time)}`
    let shared = this.reading.get(key)
    if (shared === undefined) {
      // A few documents: why any left is read beside them, a round trip fewer on a slow database.
      const states = ids.length <= STATES_BESIDE ? this.statesOf(ids, time, signal) : undefined
      states?.catch(() => {})
      const reads = this
        .readAt(time, { filter, sort: { _id: 1 }, projection: read, skip: 0, limit: ids.length + 1 }, signal)
        .then(async (page) => {
          const pageIds = Array.from(page.starts, (_, i) => idAt(page, i))
          return { page, pageIds, reasons: await this.reasonsFor(pageIds, ids, project, time, signal, states) }
        })
      shared = reads
      this.reading.set(key, reads)
      reads.finally(() => { if (this.reading.get(key) === reads) this.reading.delete(key) }).catch(() => {})
    }
    const { page, pageIds, reasons } = await shared
    const events = this.upserts(request, page, page.starts.length, pageIds)
    for (let i = 0; i < events.length; i++) {
      const event = events[i]
      if (event !== undefined) found.set(idText(pageIds[i]), event)
    }
    for (const [text, { id, reason }] of reasons) {
      // Every id here was admitted (feed-handler.ts): an ObjectId.
      found.set(text, `{"type":"remove","_id":"${(id as ObjectId).toHexString()}","reason":"${reason}"}`)
    }
    return found
  }

  /**
   * The upsert events of a page's first `count` documents, in order, written from their BSON in
   * one pass; `ids`, when given, are their `_id`s already read. A document whose `_id` is no
   * ObjectId has none (undefined): the list leaves that `_id` out, and a copy could not hold it.
   */
  private upserts (request: FastifyRequest, page: Page, count: number, ids?: unknown[]): Array<string | undefined> {
    const bounds: number[] = []
    const report = (misfit: Misfit): void => { this.fastify.offSchema.report(this.collection, misfit, request.log) }
    const json = this.transcode(
      count === page.starts.length ? page : { bytes: page.bytes, starts: page.starts.slice(0, count) },
      undefined, report, '', '', bounds
    )
    const events: Array<string | undefined> = []
    for (let i = 0; i < count; i++) {
      const id = ids?.[i] ?? idAt(page, i)
      events.push(id instanceof ObjectId
        ? `{"type":"upsert","_id":"${id.toHexString()}",` +
          `"document":${json.toString('utf8', bounds[2 * i], bounds[2 * i + 1])}}`
        : undefined)
    }
    return events
  }
}
