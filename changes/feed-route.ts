// A list's change feed (docs/changes.md): `GET <list>/changes`. Without `since` it lists the
// filter's matches by `_id` (upsert events), then follows the collection's changes from a point
// taken before the listing began. A change is routed to the projects of its pre- and
// post-images; the changed documents are then read again with the feed's own filter and
// fields, so that MongoDB decides what matches: a document found is an upsert (as it is now),
// one not found a remove.
import type { TObject } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { BSON, ObjectId, type Document, type ReadPreferenceMode } from 'mongodb'
import { compileFeedQuery, type FeedQuery } from '../list-query/compile-list-query.js'
import type { QuerySpec } from '../list-query/query-spec.js'
import { ProblemError } from '../schemas/problem.js'
import { EXACT_VALUES, type CursorBinding } from '../list-endpoint/cursor.js'
import { keysetFilter } from '../list-endpoint/keyset.js'
import { bsonToJson } from '../list-endpoint/bson-json.js'
import { decodeFields, type Page } from '../list-endpoint/bson-page.js'
import { findPage, type PageQuery } from '../list-endpoint/find-page.js'
import type { Misfit } from '../list-endpoint/off-schema.js'
import { keptPairs, nextUrl, pageProjection } from '../list-endpoint/paging.js'
import { getAndHeadOnly } from '../list-endpoint/get-only.js'
import { isHistoryLost, isUnreadable, unavailableReason } from './change-events.js'
import { clusterTimeOf } from './cluster-time.js'
import { readAtOrAfter } from './feed-reads.js'
import type { ChangeHub } from './change-hub.js'
import type { Gathered, StreamPoint } from './recent-changes.js'
import { FEED_SORT, decodeToken, encodeToken, type FeedPosition } from './feed-token.js'
import { streamFeed } from './feed-stream.js'
import { feedOpenApi } from './feed-openapi.js'

export interface FeedRouteOptions {
  collection: string
  schema: TObject
  scoped: boolean
  spec: QuerySpec
  /** A request every list and feed refuses: the 400 example shows the feed's answer to it. */
  badRequestExample: string
  /** A filter the feed accepts (the list's example): Swagger UI fills it in. */
  filterExample: string
  /** The list's own 401 and 404 examples, which the feed answers alike. */
  unauthenticated: ProblemError
  unknownProject: ProblemError
  /** The list's path; the feed's is `<url>changes`. */
  url: string
  protectedByToken: boolean
  /** Whether a project exists (the list's lookup, with its cache). */
  projectExists: (request: FastifyRequest, projectKey: string, id: ObjectId) => Promise<boolean>
  /** Builds the list's where: the filter, the project, the caller's projects. */
  where: (request: FastifyRequest, filter: Document) => Document
  projection: Document
  notFound: (id: ObjectId) => ProblemError
}

/**
 * One answer of a feed: its events (each as its JSON text, written from the documents' BSON
 * without decoding them), its next position, and whether the listing is complete.
 */
export interface FeedStep { events: string[], position: FeedPosition, synced: boolean, committedAt: number[] }

export const NDJSON = 'application/x-ndjson'

/** The `_id` of a page's document `index`: read in place when it is an ObjectId (stored first, as MongoDB does), else decoded. */
function idAt (page: Page, index: number): unknown {
  const { bytes } = page
  const at = page.starts[index] as number
  // Type 7 (ObjectId), the name "_id" and its terminating zero, then 12 bytes.
  if (bytes[at + 4] === 0x07 && bytes[at + 5] === 0x5f && bytes[at + 6] === 0x69 && bytes[at + 7] === 0x64 && bytes[at + 8] === 0) return ObjectId.createFromHexString(bytes.toString('hex', at + 9, at + 21))
  return decodeFields(page, index, ['_id'], EXACT_VALUES)._id
}

const idText = (id: unknown): string => id instanceof ObjectId ? id.toHexString() : JSON.stringify(BSON.EJSON.serialize({ id }, { relaxed: false }))
/** An `_id` as the lists write it (an ObjectId as its hex string). */
const idJson = (id: unknown): unknown => id instanceof ObjectId ? id.toHexString() : (BSON.EJSON.serialize({ id }, { relaxed: true }) as { id: unknown }).id

/** The 410 of a token older than the database's history. */
export function expired (): ProblemError {
  return ProblemError.about('since', 410, 'CHANGES_EXPIRED', 'The database no longer holds the changes after this token (its history is shorter, or the database was replaced): start again without since, and replace the copy with what the feed lists.')
}

/** The 503 of a database that cannot give feeds. */
export function unavailable (reason: string): ProblemError {
  return new ProblemError(503, 'CHANGES_UNAVAILABLE', `Change feeds are not available: ${reason}. Lists are unaffected.`, [], { 'retry-after': '30' })
}

/** The 410 of a token that stands before a change no stream can read. */
function unreadable (): ProblemError {
  return ProblemError.about('since', 410, 'CHANGES_EXPIRED', 'A change after this token can never be read from the database (an event over MongoDB\'s 16 MiB limit): start again without since, and replace the copy with what the feed lists.')
}

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

/** The error a feed answers for a failure of its database work. */
function feedError (error: unknown): unknown {
  if (isHistoryLost(error)) return expired()
  if (isUnreadable(error)) return unreadable()
  const reason = unavailableReason(error)
  return reason === undefined ? error : unavailable(reason)
}

export function feedRoute (fastify: FastifyInstance, options: FeedRouteOptions): void {
  const { collection, schema, scoped, spec, url, projection, notFound } = options
  const { QUERY_TIMEOUT_MS, PUBLIC_URL, CHANGES_READ_PREFERENCE } = fastify.config
  const transcode = bsonToJson(schema)
  const feedUrl = `${url}changes`
  fastify.changes.declare(collection, scoped)
  const refused = compileFeedQuery(options.badRequestExample, spec)
  if (refused.ok) throw new Error(`${options.badRequestExample} must be refused by every feed`)
  const badRequest = ProblemError.badRequest(refused.problems)
  const report = (request: FastifyRequest) => (misfit: Misfit): void => { fastify.offSchema.report(collection, misfit, request.log) }

  /**
   * Reads of changed documents under way, by query and by the point they read at or after:
   * requests woken by the same change (every waiting follower of a project with the same filter
   * and fields) share one read. A request never joins a read of an older point, which may have
   * begun before a change it has gathered and would move its token past that change with the
   * older state.
   */
  const reading = new Map<string, Promise<Page>>()

  /** Runs a feed's `find` at majority, at or after the cluster time `time` (feed-reads.ts). */
  const readAt = (time: bigint | undefined, query: PageQuery, signal: AbortSignal): Promise<Page> => fastify.database.timed('find', () =>
    readAtOrAfter(fastify.database.db().client, time, CHANGES_READ_PREFERENCE as ReadPreferenceMode, async (options) => await findPage(fastify.database.db(), collection, query, { maxTimeMS: QUERY_TIMEOUT_MS, signal, ...options })))

  /** The documents among `ids` that the feed's where matches at or after `time`, as upsert events' JSON by their id's text. */
  async function readAgain (request: FastifyRequest, where: Document, read: Document, ids: unknown[], time: bigint | undefined, signal: AbortSignal): Promise<Map<string, string>> {
    const found = new Map<string, string>()
    if (ids.length === 0) return found
    const filter = { $and: [where, { _id: { $in: ids } }] }
    const key = `${BSON.EJSON.stringify({ where, read }, { relaxed: false })} ${ids.map(idText).join(',')} @${String(time)}`
    let page = reading.get(key)
    if (page === undefined) {
      page = readAt(time, { filter, sort: { _id: 1 }, projection: read, skip: 0, limit: ids.length + 1 }, signal)
      const shared = page
      reading.set(key, shared)
      shared.finally(() => { if (reading.get(key) === shared) reading.delete(key) }).catch(() => {})
    }
    const bytes = await page
    const foundIds: unknown[] = []
    const events = upserts(request, bytes, bytes.starts.length, foundIds)
    for (let i = 0; i < events.length; i++) found.set(idText(foundIds[i]), events[i] as string)
    return found
  }

  /** The upsert events of a page's first `count` documents, in order, written from their BSON in one pass; `ids` receives their `_id`s. */
  function upserts (request: FastifyRequest, page: Page, count: number, ids: unknown[] = []): string[] {
    const bounds: number[] = []
    const json = transcode(count === page.starts.length ? page : { bytes: page.bytes, starts: page.starts.slice(0, count) }, undefined, report(request), '', '', bounds)
    const events: string[] = []
    for (let i = 0; i < count; i++) {
      const id = idAt(page, i)
      ids.push(id)
      events.push(`{"type":"upsert","_id":${JSON.stringify(idJson(id))},"document":${json.toString('utf8', bounds[2 * i], bounds[2 * i + 1])}}`)
    }
    return events
  }

  /** Reads one answer's worth from `position`: a page of the listing, or the changes after its point. */
  async function step (request: FastifyRequest, hub: ChangeHub, where: Document, read: Document, position: FeedPosition, limit: number, project: string | undefined, admit: (id: unknown) => boolean): Promise<FeedStep> {
    return await fastify.database.bounded(async (signal) => {
      if (position.phase === 'listing') {
        const filter = position.lastId === undefined ? where : { $and: [where, keysetFilter({ _id: 1 }, [position.lastId])] }
        // At or after the point the changes are followed from: no change before it is missed.
        const page = await readAt(readTime(position.start), { filter, sort: { _id: 1 }, projection: read, skip: 0, limit: limit + 1 }, signal)
        const more = page.starts.length > limit
        const events = upserts(request, page, Math.min(limit, page.starts.length))
        if (!more) return { events, position: { phase: 'following', point: position.start }, synced: true, committedAt: [] }
        const lastId = idAt(page, limit - 1)
        return { events, position: { phase: 'listing', start: position.start, lastId }, synced: false, committedAt: [] }
      }
      const from = hub.locate(position.point)
      let gathered: Gathered
      try {
        // A read of its own leaves half the request's time to read the documents again.
        const soft = Date.now() + QUERY_TIMEOUT_MS / 2
        gathered = from === undefined ? await hub.readFrom(position.point, project, limit, admit, signal, soft) : hub.gather(from, project, limit, admit)
        // The shared stream brings a change a moment after its commit: before an answer says
        // "nothing", what it has not brought yet is read directly, so that an answer without
        // events is as current as the request.
        if (from !== undefined && !gathered.lost && gathered.ids.length === 0) gathered = await hub.readFrom(gathered.point, project, limit, admit, signal, soft)
      } catch (error) {
        throw feedError(error)
      }
      if (gathered.lost) throw expired()
      // At or after the point the answer moves to, which stands after every change it gathered.
      const found = await readAgain(request, where, read, gathered.ids, readTime(gathered.point), signal)
      const events = gathered.ids.map((id) => found.get(idText(id)) ?? `{"type":"remove","_id":${JSON.stringify(idJson(id))}}`)
      return { events, position: { phase: 'following', point: gathered.point }, synced: true, committedAt: gathered.committedAt }
    })
  }

  /** Whether changes came after `point` since it was read (a waiting request need not wait). */
  const moved = (hub: ChangeHub, point: StreamPoint): boolean => {
    const seq = hub.locate(point)
    return seq !== undefined && seq < (hub.position().seq ?? seq)
  }

  const delivered = (step: FeedStep): void => {
    if (step.events.length === 0) return
    const { stats } = fastify.changes
    stats.eventsSent.set(collection, (stats.eventsSent.get(collection) ?? 0) + step.events.length)
    if (stats.onLag === undefined) return
    const now = Date.now()
    for (const at of step.committedAt) stats.onLag(Math.max(0, now - at) / 1000)
  }

  fastify.get(feedUrl, {
    schema: feedOpenApi(options, badRequest),
    config: { feedQuery: spec },
    validatorCompiler: () => () => true
  }, async function feed (request: FastifyRequest, reply: FastifyReply) {
    const { filter, fields, since, limit, wait } = request.feedQuery as FeedQuery
    const projectId = request.projectId
    const projectKey = scoped ? (request.params as { projectId: string }).projectId.toLowerCase() : ''
    const readable = request.principal?.projects ?? '*'
    if (scoped && readable !== '*' && !readable.has(projectKey)) throw notFound(projectId as ObjectId)
    const where = options.where(request, filter)
    // /projects/changes names only the caller's projects, even in a remove.
    const admit = scoped || readable === '*' ? () => true : (id: unknown) => id instanceof ObjectId && readable.has(id.toHexString())
    const binding: CursorBinding = {
      path: `${collection} ${feedUrl} ${String(projectId)}`,
      filter: BSON.EJSON.stringify(filter, { relaxed: false }),
      sort: FEED_SORT,
      fields: fields === undefined ? '*' : [...fields].sort().join(',')
    }
    let position: FeedPosition | undefined
    let issuedIn: string | null = null
    if (since !== undefined) {
      const token = decodeToken(fastify.cursors, binding, since)
      if (!token.ok) throw ProblemError.about('since', 400, token.code, token.message)
      position = token.position
      issuedIn = token.identity
    }
    // HEAD asks for the headers of one answer, never for a stream.
    const streaming = request.method === 'GET' && (request.headers.accept ?? '').includes(NDJSON)
    const release = streaming ? fastify.changes.admit('stream') : wait > 0 ? fastify.changes.admit('wait') : undefined
    try {
      const reason = await fastify.changes.unavailable(collection, scoped)
      if (reason !== undefined) throw unavailable(reason)
      if (scoped && !await options.projectExists(request, projectKey, projectId as ObjectId)) throw notFound(projectId as ObjectId)
      // A token of another history (a replaced database, a collection created again) is 410 at once.
      const identity = await fastify.database.bounded(async () => await fastify.changes.identities.of(collection))
      if (issuedIn !== null && issuedIn !== identity) throw expired()
      const hub = fastify.changes.hub(collection, scoped)
      if (position === undefined) {
        // The changes are followed from before the listing: nothing written during it is lost.
        await fastify.database.bounded(async (signal) => {
          const aborted = new Promise<never>((_resolve, reject) => { signal.addEventListener('abort', () => { reject(signal.reason) }, { once: true }) })
          await Promise.race([hub.ready(), aborted]).catch((error: unknown) => {
            if (fastify.changes.stopping) throw new ProblemError(503, 'OVERLOADED', 'The service is shutting down; retry, another replica will answer.', [], { 'retry-after': '1' })
            throw feedError(error)
          })
        })
        position = { phase: 'listing', start: hub.position() }
      } else if (!hub.isRunning) {
        // Started for the waits and the next answers; this one reads on its own meanwhile.
        hub.ready().catch(() => {})
      }
      const { projection: read } = pageProjection(projection, fields, [])
      const project = scoped ? projectKey : undefined
      const next = (from: FeedPosition): Promise<FeedStep> => step(request, hub, where, read, from, limit, project, admit)
      const encode = (at: FeedPosition): string => encodeToken(fastify.cursors, binding, at, identity)
      if (streaming) {
        return await streamFeed({ fastify, request, reply, hub, project, limit, first: position, next, encode, delivered, moved })
      }
      let answer = await next(position)
      if (answer.events.length === 0 && wait > 0) {
        answer = await waitForChanges(reply, hub, project, answer, Date.now() + wait * 1000, next)
      }
      delivered(answer)
      const token = encode(answer.position)
      reply.header('link', `<${nextUrl(request, token, PUBLIC_URL, keptPairs(request.raw.url ?? '', 'since'), 'since')}>; rel="next"`)
      reply.type('application/json; charset=utf-8')
      return `{"events":[${answer.events.join(',')}],"next":${JSON.stringify(token)},"synced":${String(answer.synced)}}`
    } finally {
      release?.()
    }
  })

  /** Waits for a change of the project until `deadline`, the client leaving or the service stopping; then answers what there is. */
  async function waitForChanges (reply: FastifyReply, hub: ChangeHub, project: string | undefined, answer: FeedStep, deadline: number, next: (from: FeedPosition) => Promise<FeedStep>): Promise<FeedStep> {
    let current = answer
    const state = { gone: false }
    const leave = (): void => { state.gone = true }
    reply.raw.once('close', leave)
    while (current.events.length === 0 && !fastify.changes.stopping && !state.gone && Date.now() < deadline) {
      const point = (current.position as { point: StreamPoint }).point
      if (!moved(hub, point)) await hub.nextWake(project, deadline, fastify.changes.onStop, reply.raw)
      // Stopping: the answer is what it has, not another read of a database that may be stopping too (Ctrl-C stops the embedded one).
      if (state.gone || fastify.changes.stopping) break
      current = await next(current.position)
      if (fastify.changes.stopping) break
    }
    reply.raw.off('close', leave)
    return current
  }

  getAndHeadOnly(fastify, feedUrl, 'change feeds')
}
