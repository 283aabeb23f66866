// Conditional requests on lists and counts (docs/conditional-requests.md): a weak ETag on every
// 200, and `If-None-Match` answered 304 exactly when the body would be the same. The ETag holds
// a digest of the body, one of the request, and, where the collection's change stream covers
// it, the stream's point the answer was read after: a request naming it, when nothing of its
// collection (for its project) has changed since, is answered 304 without reading the
// collection. Every other one runs its query, and the bodies' digests decide. Nothing in it is
// a replica's memory: any replica, and any restart, reads it.
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { collationKey, parseCollation } from '../database/collation.js'
import type { ChangeHub } from '../changes/change-hub.js'
import type { ConditionalRequests, ValidatorScope } from '../list-endpoint/validators.js'
import type { StreamPoint } from '../changes/recent-changes.js'
import { AnswerDigests, SharedProbes, etagOf, validatorsIn, type Validator } from '../changes/entity-tags.js'
import { routeHooks } from '../lib/route-hooks.js'
import { varyOn } from '../lib/vary.js'
import { ProblemError } from '../schemas/problem.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Conditional requests: a list's 304 (list-endpoint/validators.ts). */
    conditional: ConditionalRequests
  }
  interface FastifyRequest {
    /** The stream's point the answer is read after: what its ETag carries. */
    validatorPoint: StreamPoint | null
  }
  interface FastifyContextConfig {
    /** Opts a route in: its answers carry ETags and honour If-None-Match. */
    conditional?: boolean
  }
}

/** The 412 of an If-Match naming entity tags (RFC 9110, 13.1.1: a strong comparison, which weak tags never pass). */
export const preconditionFailed = (): ProblemError => ProblemError.about('if-match', 412, 'PRECONDITION_FAILED',
  'If-Match names entity tags, and this service\'s are weak: a strong comparison never matches them. ' +
  'Send If-None-Match to revalidate, or If-Match: * to ask for any answer.')

/**
 * RFC 9110, 13.1.1: If-Match compares strongly, which none of the service's weak tags passes, and
 * `*` asks for an answer. Decided on a 200 (a refusal ignores it), before If-None-Match (13.2.2).
 */
function refusedByIfMatch (request: FastifyRequest, reply: FastifyReply): ProblemError | undefined {
  const header = request.headers['if-match']
  if (header === undefined || header.trim() === '*') return undefined
  reply.removeHeader('link')
  return preconditionFailed()
}

async function conditionalRequestsPlugin (fastify: FastifyInstance) {
  const probes = new SharedProbes()
  fastify.decorateRequest('validatorPoint', null)

  // revalidate's reading of If-None-Match and of the request's digest: the answer's tag reuses both.
  const readBy = new WeakMap<FastifyRequest, { named: Validator[], mine: string }>()
  const digests = new AnswerDigests(collationKey(parseCollation(fastify.config.COLLATION)))
  /** The request's identity: its path and query as sent, the caller's projects and the collation. */
  const requestDigest = (request: FastifyRequest): string =>
    digests.request(request.raw.url ?? '', request.principal?.projects)

  fastify.decorate('conditional', {
    notModified: (request: FastifyRequest, reply: FastifyReply,
      { collection, scoped, project }: ValidatorScope): false | Promise<boolean> => {
      // Only a list read from the primary sees every change its point stands after.
      if (fastify.database.db().readPreference.mode !== 'primary') return false
      const hub = fastify.changes.hub(collection, scoped)
      if (hub.isRunning) request.validatorPoint = hub.position()
      const header = request.headers['if-none-match']
      // If-Match is decided first (RFC 9110, 13.2.2), on the answer: tagAnswer.
      if (header === undefined || request.headers['if-match'] !== undefined) return false
      return revalidate(request, reply, hub, header, { collection, scoped, project })
    }
  })

  /** The 304 of a request whose `If-None-Match` names a point after which nothing of `project` changed. */
  async function revalidate (request: FastifyRequest, reply: FastifyReply, hub: ChangeHub, header: string,
    { collection, scoped, project }: ValidatorScope): Promise<boolean> {
    if (!hub.isRunning) {
      // A client that revalidates asks again: the collection's stream is opened for its next answers,
      // and this one is answered by its query, without waiting for the check.
      fastify.changes.unavailable(collection, scoped).then((reason) => {
        if (reason === undefined) hub.ready().catch(() => {})
      }, () => {})
      return false
    }
    const mine = requestDigest(request)
    const named = validatorsIn(header, fastify.textSeal)
    readBy.set(request, { named, mine })
    const asked = named.find((v) => v.point !== undefined && v.request === mine)
    if (asked?.point === undefined) return false
    try {
      // Every change committed before now, after the point, for this project: none, the same body.
      const point = asked.point
      const key = `${collection} ${String(project)} ${JSON.stringify(point.resumeToken)} ${String(point.after)}`
      // Within the request's own budget, which its query shares when this cannot decide.
      const gathered = await fastify.database.bounded(async (signal) => await probes.run(
        key, async () => await hub.readFrom(point, scoped ? project : undefined, 1, () => true, signal)
      ), request)
      if (gathered.lost || gathered.ids.length > 0) return false
      send304(reply, {
        body: asked.body,
        request: asked.request,
        point: {
          resumeToken: gathered.point.resumeToken,
          ...(gathered.point.after === undefined ? {} : { after: gathered.point.after })
        }
      })
      return true
    } catch {
      // A point the stream cannot resume from (an old one, another history): the query decides.
      return false
    }
  }

  // A callback hook rather than an async one: no promise, and no turn of the microtask queue, on every answer.
  const tagAnswer: onSendHookHandler = (request, reply, payload, done) => {
    if (reply.statusCode !== 200 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) {
      done(null, payload)
      return
    }
    const failed = refusedByIfMatch(request, reply)
    if (failed !== undefined) return done(failed)
    const point = request.validatorPoint
    const header = request.headers['if-none-match']
    const read = header === undefined ? undefined : readBy.get(request)
    const mine = read?.mine ?? requestDigest(request)
    const validator: Validator = {
      body: digests.body(mine, payload), request: mine, ...(point === null ? {} : { point })
    }
    // `*` matches whatever answer there is (RFC 9110, 13.1.2): a list always has one.
    if (header !== undefined && (header.trim() === '*' ||
      (read?.named ?? validatorsIn(header, fastify.textSeal)).some((v) => v.body === validator.body))) {
      send304(reply, validator)
      reply.removeHeader('content-type')
      // No body, and so no Content-Length (RFC 9110 §8.6): null, where a text would be measured.
      done(null, null)
      return
    }
    reply.header('etag', etagOf(validator, fastify.textSeal)).header('cache-control', 'no-cache')
    done(null, payload)
  }
  // On the routes that opt in, before compression's own onSend hook (plugins/compression.ts
  // depends on this plugin, and a route's hooks follow the global ones): one ETag for every encoding.
  fastify.addHook('onRoute', (route) => {
    if (route.config?.conditional !== true) return
    route.onSend = [tagAnswer, ...routeHooks(route.onSend).map(notModifiedUnmeasured)]
  })
}

/** A 304 carries the validator and the Vary its 200 would (RFC 9110 §15.4.5): with compression, Accept-Encoding. */
function send304 (reply: FastifyReply, validator: Validator): void {
  reply.code(304).header('etag', etagOf(validator, reply.server.textSeal)).header('cache-control', 'no-cache')
  if (reply.server.config.COMPRESSION === 'on') varyOn(reply, 'accept-encoding')
}

/**
 * A HEAD route's last onSend hook, Fastify's own (exposeHeadRoutes, its lib/head-route.js), gives
 * every answer the Content-Length of its body, a 304 '0'; a 304 carries none, as GET's (RFC 9110
 * §8.6). Its replacement keeps its name: plugins/compression.ts finds the hook by it.
 */
function notModifiedUnmeasured (hook: onSendHookHandler): onSendHookHandler {
  if (hook.name !== 'headRouteOnSendHandler') return hook
  const headRouteOnSendHandler: onSendHookHandler = function (request, reply, payload, done) {
    if (reply.statusCode !== 304) return hook.call(this, request, reply, payload, done)
    reply.removeHeader('content-length')
    done(null, null)
  }
  return headRouteOnSendHandler
}

export default fp(conditionalRequestsPlugin, {
  name: 'conditional-requests',
  dependencies: ['config', 'mongodb', 'changes', 'cursors']
})
