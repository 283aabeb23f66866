// A feed's request, from its compiled query to its answer: the token read back, the checks
// (the project, the collection's history, the shared stream), one step or a wait for the next
// change, or an NDJSON stream (feed-route.ts registers it).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ObjectId, type Document } from 'mongodb'
import type { FeedQuery } from '../list-query/compile-list-query.js'
import { filterIdentity } from '../list-query/filter-identity.js'
import { ProblemError, shuttingDown } from '../schemas/problem.js'
import { parseCollation } from '../database/collation.js'
import { collationSuffix, fieldsKey, projectsSuffix, type CursorBinding } from '../list-endpoint/cursor.js'
import { keptPairs, nextUrl, pageProjection } from '../list-endpoint/paging.js'
import { unlessAborted } from '../lib/pause.js'
import { varyOn } from '../lib/vary.js'
import type { ChangeHub } from './change-hub.js'
import { FEED_SORT, decodeToken, encodeToken, type FeedPosition } from './feed-token.js'
import { expired, feedError, unavailable } from './feed-problems.js'
import { FeedSteps, type FeedStep } from './feed-steps.js'
import { asksForStream, streamFeed } from './feed-stream.js'
import type { FeedDescription } from './feed-openapi.js'

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

export class FeedHandler {
  readonly feedUrl: string
  /** A token's filter was decided in a collation: under another one it would decide otherwise. */
  private readonly feedSort: string
  private readonly steps: FeedSteps

  constructor (private readonly fastify: FastifyInstance, private readonly options: FeedRouteOptions) {
    this.feedSort = FEED_SORT + collationSuffix(parseCollation(fastify.config.COLLATION))
    this.steps = new FeedSteps(fastify, options.collection, options.schema)
    this.feedUrl = `${options.url}changes`
  }

  /** The route's handler. */
  readonly feed = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const { fastify, options: { collection, scoped } } = this
    const { filter, fields, since, limit, wait } = request.feedQuery as FeedQuery
    // JSON or a stream, as Accept chooses (feed-route.ts makes every answer no-store).
    varyOn(reply, 'Accept')
    const projectKey = this.options.projectKey(request)
    const readable = request.principal?.projects ?? '*'
    const where = this.options.where(request, filter)
    // /projects/changes names only the caller's projects, even in a remove.
    // A document whose _id is no ObjectId has no event (feed-steps.ts, upserts).
    const admit = scoped || readable === '*'
      ? (id: unknown) => id instanceof ObjectId
      : (id: unknown) => id instanceof ObjectId && readable.has(id.toHexString())
    // /projects/changes is the caller's projects: its token is bound to them too, so that a
    // copy made under one claim is not followed under another (a project gained or lost would
    // never reach it). A project's feed is refused (404) outside the claim: it is bound to none.
    const binding: CursorBinding = {
      path: `${collection} ${this.feedUrl} ${String(request.projectId)}${scoped ? '' : projectsSuffix(readable)}`,
      filter: filterIdentity(filter),
      sort: this.feedSort,
      fields: fieldsKey(fields)
    }
    const token = since === undefined ? undefined : decodeToken(fastify.cursors, fastify.textSeal, binding, since)
    if (token !== undefined && !token.ok) throw ProblemError.about('since', 400, token.code, token.message)
    // HEAD of a stream gets the headers a stream begins with, and holds nothing open.
    const stream = asksForStream(request.headers.accept)
    const release = stream
      ? (request.method === 'GET' ? fastify.changes.admit('stream') : undefined)
      : wait > 0 ? fastify.changes.admit('wait') : undefined
    try {
      const { projection: read } = pageProjection(this.options.projection, fields, [])
      const project = scoped ? projectKey : undefined
      // The first step shares the request's budget with the checks; one after a wait, or in a stream, has its own.
      let budget: FastifyRequest | undefined = request
      const stepsOf = (hub: ChangeHub) => (from: FeedPosition, passed?: Promise<unknown>): Promise<FeedStep> => {
        const shared = budget
        budget = undefined
        return this.steps.step(request, hub, where, read, from, limit, project, admit, shared, passed)
      }
      // A follower's first step runs beside the checks, a round trip fewer on a slow database, and
      // so does a first listing's page when the shared stream already runs (its start is known at
      // once) and its project is not remembered as missing: what a listing reads after its page
      // waits for the checks, so that a request refused costs its page alone. Either is answered
      // once they have passed.
      const checks = Promise.withResolvers<void>()
      checks.promise.catch(() => {})
      let early: { mark: number, step: Promise<FeedStep> } | undefined
      const listsAtOnce = (hub: ChangeHub): boolean =>
        hub.isRunning && !(scoped && fastify.projectCache.get(projectKey) === false)
      const begin = stream
        ? undefined
        : (hub: ChangeHub): FeedPosition | undefined => {
            const from: FeedPosition | undefined = token?.position ??
              (listsAtOnce(hub) ? { phase: 'listing', start: hub.position() } : undefined)
            if (from === undefined) return undefined
            const mark = hub.mark()
            early = { mark, step: stepsOf(hub)(from, checks.promise) }
            early.step.catch(() => {})
            return from
          }
      const { hub, identity, position } = await this.checked(request, projectKey, token?.identity ?? null,
        token?.position, begin).catch((error: unknown) => { checks.reject(error); throw error })
      checks.resolve()
      const next = stepsOf(hub)
      const encode = (at: FeedPosition): string => encodeToken(fastify.cursors, fastify.textSeal, binding, at, identity)
      const delivered = (step: FeedStep): void => {
        fastify.changes.delivered(collection, step.events.length, step.committedAt)
      }
      if (stream) {
        return await streamFeed({
          fastify, request, reply, hub, project, limit, first: position, next, encode, delivered
        })
      }
      const mark = early?.mark ?? hub.mark()
      let answer = await (early?.step ?? next(position))
      // A listing page with nothing to send (its documents' ids are no ObjectIds) is not the end
      // of the listing: its next page is asked for at once.
      if (answer.events.length === 0 && wait > 0 && answer.position.phase === 'following') {
        // N seconds from the request's arrival, not from the end of its first read; on the clock
        // the wait is kept by (Date.now), which a slewed wall clock sets apart from reply.elapsedTime's.
        answer = await this.waitForChanges(reply, hub, project, answer, request.arrivedAt + wait * 1000, next, mark)
      }
      delivered(answer)
      const nextToken = encode(answer.position)
      const kept = keptPairs(request.raw.url ?? '', 'since')
      reply.header('link', `<${nextUrl(request, nextToken, fastify.config.PUBLIC_URL, kept, 'since')}>; rel="next"`)
      reply.type('application/json; charset=utf-8')
      return `{"events":[${answer.events.join(',')}],"next":${JSON.stringify(nextToken)},` +
        `"synced":${String(answer.synced)}}`
    } finally {
      release?.()
    }
  }

  /**
   * The checks before a first step, within the request's one budget: the feed can be given, the
   * project exists, the token is of this collection's history (`begin` is given the hub as soon
   * as there is one, to run a step beside them, and returns the position that step began from);
   * then the collection's shared stream and, without a position, the point the changes are
   * followed from, taken before the listing so that nothing written during it is lost.
   */
  private async checked (
    request: FastifyRequest,
    projectKey: string,
    issuedIn: string | null,
    given: FeedPosition | undefined,
    begin?: (hub: ChangeHub) => FeedPosition | undefined
  ): Promise<{ hub: ChangeHub, identity: string | null, position: FeedPosition }> {
    const { fastify, options: { collection, scoped } } = this
    const reason = await fastify.changes.unavailable(collection, scoped, request)
    if (reason !== undefined) throw unavailable(reason)
    const hub = fastify.changes.hub(collection, scoped)
    // The shared stream starts beside the checks (one round trip fewer before a first listing);
    // a request whose step began early does not wait for it: that step reads on its own
    // meanwhile, and the stream serves the waits and the next answers.
    const following = hub.ready()
    following.catch(() => {})
    const position = begin?.(hub) ?? given
    const [exists, identity] = await Promise.all([
      scoped ? this.options.projectExists(request, projectKey, request.projectId as ObjectId) : true,
      fastify.database.bounded(async (signal) => await fastify.changes.identities.of(collection, signal), request)
    ])
    if (!exists) throw this.options.notFound(request.projectId as ObjectId)
    // A token of another history (a replaced database, a collection created again) is 410 at once.
    if (issuedIn !== null && issuedIn !== identity) throw expired()
    if (position !== undefined) return { hub, identity, position }
    await fastify.database.bounded(async (signal) => {
      await unlessAborted(following, signal).catch((error: unknown) => {
        throw fastify.changes.stopping ? shuttingDown() : feedError(error)
      })
    }, request)
    return { hub, identity, position: { phase: 'listing', start: hub.position() } }
  }

  /**
   * Waits for a change of the project until `deadline`, the client leaving or the service
   * stopping; then answers what there is. `mark` (hub.mark()) was taken before `answer` was read.
   */
  private async waitForChanges (
    reply: FastifyReply,
    hub: ChangeHub,
    project: string | undefined,
    answer: FeedStep,
    deadline: number,
    next: (from: FeedPosition) => Promise<FeedStep>,
    mark: number
  ): Promise<FeedStep> {
    const { changes } = this.fastify
    let current = answer
    let readSince = mark
    // A client may have left during the first read, its 'close' already past.
    const state = { gone: reply.raw.closed }
    const leave = (): void => { state.gone = true }
    reply.raw.once('close', leave)
    while (current.events.length === 0 && !changes.stopping && !state.gone && Date.now() < deadline) {
      if (current.position.phase !== 'following') break
      const { point } = current.position
      if (!hub.movedSince(point, project, readSince)) {
        await hub.nextWake(project, deadline, changes.onStop, reply.raw)
        // The wait ran out and the stream, following from the point, brought nothing after it:
        // nothing to read again, and the answer comes at the end of its wait, not one read later.
        if (
          Date.now() >= deadline && hub.isRunning && hub.locate(point) !== undefined &&
          !hub.movedSince(point, project, readSince)
        ) break
      }
      // Stopping: the answer is what it has, not another read of a database that may be stopping
      // too (Ctrl-C stops the embedded one).
      if (state.gone || changes.stopping) break
      readSince = hub.mark()
      current = await next(current.position)
      if (changes.stopping) break
    }
    reply.raw.off('close', leave)
    return current
  }
}
