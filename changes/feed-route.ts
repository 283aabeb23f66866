// A list's change feed (docs/changes.md): `GET <list>/changes`. Without `since` it lists the
// filter's matches by `_id` (upsert events), then follows the collection's changes from a point
// taken before the listing began. A change is routed to the projects of its pre- and
// post-images; the changed documents are then read again with the feed's own filter and
// fields, so that MongoDB decides what matches: a document found is an upsert (as it is now),
// one not found a remove.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { BSON, ObjectId, type Document } from 'mongodb'
import { compileFeedQuery, type FeedQuery } from '../list-query/compile-list-query.js'
import { ProblemError } from '../schemas/problem.js'
import { collationKey, parseCollation } from '../database/collation.js'
import type { CursorBinding } from '../list-endpoint/cursor.js'
import { keptPairs, nextUrl, pageProjection } from '../list-endpoint/paging.js'
import { getAndHeadOnly } from '../list-endpoint/get-only.js'
import { unlessAborted } from '../lib/pause.js'
import type { ChangeHub } from './change-hub.js'
import type { StreamPoint } from './recent-changes.js'
import { FEED_SORT, decodeToken, encodeToken, type FeedPosition } from './feed-token.js'
import { expired, feedError, unavailable } from './feed-problems.js'
import { feedSteps, type FeedStep } from './feed-steps.js'
import { asksForStream, streamFeed } from './feed-stream.js'
import { feedOpenApi, type FeedDescription } from './feed-openapi.js'

export interface FeedRouteOptions extends FeedDescription {
  /** The list's path; the feed's is `<url>changes`. */
  url: string
  /** The path's project key ('' when unscoped), or 404 for a project outside the caller's claim (the list's). */
  projectKey: (request: FastifyRequest) => string
  /** Whether a project exists (the list's lookup, with its cache). */
  projectExists: (request: FastifyRequest, projectKey: string, id: ObjectId) => Promise<boolean>
  /** Builds the list's where: the filter, the project, the caller's projects. */
  where: (request: FastifyRequest, filter: Document) => Document
  projection: Document
  notFound: (id: ObjectId) => ProblemError
}

export function feedRoute (fastify: FastifyInstance, options: FeedRouteOptions): void {
  const { collection, schema, scoped, spec, url, projection, notFound } = options
  const { PUBLIC_URL } = fastify.config
  // A token's filter was decided in a collation: under another one it would decide otherwise.
  const collation = parseCollation(fastify.config.COLLATION)
  const feedSort = collation === undefined ? FEED_SORT : `${FEED_SORT} collation ${collationKey(collation)}`
  const step = feedSteps(fastify, { collection, schema })
  const feedUrl = `${url}changes`
  fastify.changes.declare(collection, scoped)
  const refused = compileFeedQuery(options.badRequestExample, spec)
  if (refused.ok) throw new Error(`${options.badRequestExample} must be refused by every feed`)
  const badRequest = ProblemError.badRequest(refused.problems)

  /**
   * Whether changes came after `point` since it was read, `mark` (hub.mark()) taken before that
   * read: a waiting request need not wait. A point the recent changes cannot place (read by a
   * stream of its own) cannot tell a change brought during that read: one of the project's counts.
   */
  const moved = (hub: ChangeHub, point: StreamPoint, project: string | undefined, mark: number): boolean => {
    const seq = hub.locate(point)
    return seq === undefined ? hub.changedSince(mark, project) : seq < (hub.position().seq ?? seq)
  }

  const delivered = (step: FeedStep): void => { fastify.changes.delivered(collection, step.events.length, step.committedAt) }

  fastify.get(feedUrl, {
    schema: feedOpenApi(options, badRequest),
    config: { feedQuery: spec },
    validatorCompiler: () => () => true
  }, async function feed (request: FastifyRequest, reply: FastifyReply) {
    const { filter, fields, since, limit, wait } = request.feedQuery as FeedQuery
    const projectId = request.projectId
    const projectKey = options.projectKey(request)
    const readable = request.principal?.projects ?? '*'
    const where = options.where(request, filter)
    // /projects/changes names only the caller's projects, even in a remove.
    const admit = scoped || readable === '*' ? () => true : (id: unknown) => id instanceof ObjectId && readable.has(id.toHexString())
    const binding: CursorBinding = {
      path: `${collection} ${feedUrl} ${String(projectId)}`,
      filter: BSON.EJSON.stringify(filter, { relaxed: false }),
      sort: feedSort,
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
    // HEAD of a stream gets the headers a stream begins with, and holds nothing open.
    const stream = asksForStream(request.headers.accept)
    const release = stream ? (request.method === 'GET' ? fastify.changes.admit('stream') : undefined) : wait > 0 ? fastify.changes.admit('wait') : undefined
    try {
      const reason = await fastify.changes.unavailable(collection, scoped, request)
      if (reason !== undefined) throw unavailable(reason)
      const hub = fastify.changes.hub(collection, scoped)
      // The shared stream starts beside the checks (one round trip fewer before a first listing);
      // a request with `since` does not wait for it: it reads on its own meanwhile, and the stream
      // serves the waits and the next answers.
      const following = hub.ready()
      following.catch(() => {})
      // The project and the collection's identity side by side, within the request's one budget.
      const [exists, identity] = await Promise.all([
        scoped ? options.projectExists(request, projectKey, projectId as ObjectId) : true,
        fastify.database.bounded(async (signal) => await fastify.changes.identities.of(collection, signal), request)
      ])
      if (!exists) throw notFound(projectId as ObjectId)
      // A token of another history (a replaced database, a collection created again) is 410 at once.
      if (issuedIn !== null && issuedIn !== identity) throw expired()
      if (position === undefined) {
        // The changes are followed from before the listing: nothing written during it is lost.
        await fastify.database.bounded(async (signal) => {
          await unlessAborted(following, signal).catch((error: unknown) => {
            if (fastify.changes.stopping) throw new ProblemError(503, 'OVERLOADED', 'The service is shutting down; retry, another replica will answer.', [], { 'retry-after': '1' })
            throw feedError(error)
          })
        }, request)
        position = { phase: 'listing', start: hub.position() }
      }
      const { projection: read } = pageProjection(projection, fields, [])
      const project = scoped ? projectKey : undefined
      // The first step shares the request's budget with the reads above; one after a wait, or in a stream, has its own.
      let budget: FastifyRequest | undefined = request
      const next = (from: FeedPosition): Promise<FeedStep> => {
        const shared = budget
        budget = undefined
        return step(request, hub, where, read, from, limit, project, admit, shared)
      }
      const encode = (at: FeedPosition): string => encodeToken(fastify.cursors, binding, at, identity)
      if (stream) {
        return await streamFeed({ fastify, request, reply, hub, project, limit, first: position, next, encode, delivered, moved })
      }
      const mark = hub.mark()
      let answer = await next(position)
      if (answer.events.length === 0 && wait > 0) {
        // N seconds from the request's arrival, not from the end of its first read (whole ms: never before it arrived).
        answer = await waitForChanges(reply, hub, project, answer, Date.now() - Math.floor(reply.elapsedTime) + wait * 1000, next, mark)
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

  /**
   * Waits for a change of the project until `deadline`, the client leaving or the service stopping;
   * then answers what there is. `mark` (hub.mark()) was taken before `answer` was read.
   */
  async function waitForChanges (reply: FastifyReply, hub: ChangeHub, project: string | undefined, answer: FeedStep, deadline: number, next: (from: FeedPosition) => Promise<FeedStep>, mark: number): Promise<FeedStep> {
    let current = answer
    let readSince = mark
    // A client may have left during the first read, its 'close' already past.
    const state = { gone: reply.raw.closed }
    const leave = (): void => { state.gone = true }
    reply.raw.once('close', leave)
    while (current.events.length === 0 && !fastify.changes.stopping && !state.gone && Date.now() < deadline) {
      const point = (current.position as { point: StreamPoint }).point
      if (!moved(hub, point, project, readSince)) {
        await hub.nextWake(project, deadline, fastify.changes.onStop, reply.raw)
        // The wait ran out and the stream, following from the point, brought nothing after it:
        // nothing to read again, and the answer comes at the end of its wait, not one read later.
        if (Date.now() >= deadline && hub.isRunning && hub.locate(point) !== undefined && !moved(hub, point, project, readSince)) break
      }
      // Stopping: the answer is what it has, not another read of a database that may be stopping too (Ctrl-C stops the embedded one).
      if (state.gone || fastify.changes.stopping) break
      readSince = hub.mark()
      current = await next(current.position)
      if (fastify.changes.stopping) break
    }
    reply.raw.off('close', leave)
    return current
  }

  getAndHeadOnly(fastify, feedUrl, 'change feeds')
}
