// Conditional requests on lists and counts (docs/conditional-requests.md): a weak ETag on every
// 200, and `If-None-Match` answered 304 exactly when the body would be the same. The ETag holds
// a digest of the body, one of the request, and, where the collection's change stream covers
// it, the stream's point the answer was read after: a request naming it, when nothing of its
// collection (for its project) has changed since, is answered 304 without reading the
// collection. Every other one runs its query, and the bodies' digests decide. Nothing in it is
// a replica's memory: any replica, and any restart, reads it.
import { hash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { LRUCache } from 'lru-cache'
import { collationKey, parseCollation } from '../database/collation.js'
import type { ChangeHub } from '../changes/change-hub.js'
import type { ConditionalRequests, ValidatorScope } from '../list-endpoint/validators.js'
import type { Gathered, StreamPoint } from '../changes/recent-changes.js'
import { RecentMap } from '../lib/recent-map.js'
import { routeHooks } from '../lib/route-hooks.js'

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

const VERSION = 'v1'
/** Request digests kept, and the longest identity kept (longer ones are digested every time). */
const REQUEST_DIGESTS_KEPT = 1000
const KEPT_IDENTITY_LENGTH = 1024
/** Bodies kept with their digests: how many, how large one may be, and all together (bytes or characters). */
const BODIES_KEPT = 1000
const KEPT_BODY_LENGTH = 256 * 1024
const BODIES_KEPT_SIZE = 8 * 1024 * 1024

interface Validator { body: string, request: string, point?: StreamPoint }

/** The first `chars` characters of the base64url SHA-256 of `data` (6 bits each): one call, no Hash object. */
const digest = (data: string | Buffer, chars: number): string => hash('sha256', data, 'base64url').slice(0, chars)

/** Whether two bodies hold the same bytes (a page's body is text below a size, a Buffer above it). */
function sameBytes (a: string | Buffer, b: string | Buffer): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b
  return a.equals(b)
}

function etagOf ({ body, request, point }: Validator): string {
  const at = point === undefined ? '' : `.${Buffer.from(JSON.stringify(point.after === undefined ? { t: point.resumeToken } : { t: point.resumeToken, a: point.after })).toString('base64url')}`
  return `W/"${VERSION}.${body}.${request}${at}"`
}

/** The service's validators among `If-None-Match`'s entity tags (weak comparison: W/ ignored). */
function validatorsIn (header: string | undefined): Validator[] {
  if (header === undefined || header.length > 8192) return []
  const found: Validator[] = []
  for (const tag of header.split(',')) {
    const match = /^\s*(?:W\/)?"v1\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{11})(?:\.([A-Za-z0-9_-]+))?"\s*$/.exec(tag)
    if (match === null) continue
    const [, body, request, at] = match as unknown as [string, string, string, string | undefined]
    let point: StreamPoint | undefined
    if (at !== undefined) {
      try {
        const read = JSON.parse(Buffer.from(at, 'base64url').toString('utf8')) as { t?: unknown, a?: unknown }
        if (read.t !== null && typeof read.t === 'object' && typeof (read.t as { _data?: unknown })._data === 'string') {
          point = { resumeToken: read.t as StreamPoint['resumeToken'], ...(typeof read.a === 'string' ? { after: read.a } : {}) }
        }
      } catch {}
    }
    found.push({ body, request, ...(point === undefined ? {} : { point }) })
  }
  return found
}

/**
 * Reads of the changes after a point, shared: requests that revalidate the same answer at once
 * share one. A read under way may have begun before a request arrived, and must not answer for
 * changes committed after it began: that request, and all that arrive meanwhile, share the next.
 */
export class SharedProbes {
  private readonly probes = new Map<string, { running: Promise<Gathered>, next?: Promise<Gathered> }>()

  run (key: string, read: () => Promise<Gathered>): Promise<Gathered> {
    const entry = this.probes.get(key)
    if (entry === undefined) {
      const running = read()
      const created: { running: Promise<Gathered>, next?: Promise<Gathered> } = { running }
      this.probes.set(key, created)
      running.catch(() => {}).finally(() => { if (this.probes.get(key) === created && created.next === undefined) this.probes.delete(key) }).catch(() => {})
      return running
    }
    entry.next ??= entry.running.catch(() => {}).then(async () => {
      const running = read()
      entry.running = running
      entry.next = undefined
      running.catch(() => {}).finally(() => { if (this.probes.get(key) === entry && entry.next === undefined && entry.running === running) this.probes.delete(key) }).catch(() => {})
      return await running
    })
    return entry.next
  }
}

async function conditionalRequestsPlugin (fastify: FastifyInstance) {
  const probes = new SharedProbes()
  const collation = collationKey(parseCollation(fastify.config.COLLATION))
  fastify.decorateRequest('validatorPoint', null)

  // The validators of If-None-Match as revalidate read them: the answer's tag is compared with the same.
  const namedBy = new WeakMap<FastifyRequest, Validator[]>()
  // Digests of the requests seen lately: a poll or a popular page asks the same URL again.
  const requestDigests = new RecentMap<string>(REQUEST_DIGESTS_KEPT)
  /** The request's identity: its path and query as sent, the caller's projects and the collation. */
  const requestDigest = (request: FastifyRequest): string => {
    const projects = request.principal?.projects
    const readable = projects === undefined || projects === '*' ? '*' : [...projects].sort().join(',')
    const identity = `${request.raw.url ?? ''}\n${readable}`
    const kept = identity.length <= KEPT_IDENTITY_LENGTH
    const known = kept ? requestDigests.get(identity) : undefined
    if (known !== undefined) return known
    const made = digest(`${identity}\n${collation}`, 11)
    if (kept) requestDigests.set(identity, made)
    return made
  }

  // The last body of each request lately answered, with its digest: a poll or a popular page is
  // often answered with the same bytes again, and comparing them costs less than the digest.
  // The digest is the body's alone, so only byte equality decides (the request is where to look).
  // A Buffer is copied: the kept bytes are never anyone else's to change.
  const lastBodies = new LRUCache<string, { body: string | Buffer, digest: string }>({ max: BODIES_KEPT, maxSize: BODIES_KEPT_SIZE, sizeCalculation: ({ body }) => Math.max(body.length, 1) })
  const bodyDigest = (request: string, body: string | Buffer): string => {
    const last = lastBodies.get(request)
    if (last !== undefined && sameBytes(last.body, body)) return last.digest
    const made = digest(body, 22)
    if (body.length <= KEPT_BODY_LENGTH) lastBodies.set(request, { body: typeof body === 'string' ? body : Buffer.from(body), digest: made })
    return made
  }

  const send304 = (reply: FastifyReply, validator: Validator): void => {
    reply.code(304).header('etag', etagOf(validator)).header('cache-control', 'no-cache')
  }

  fastify.decorate('conditional', {
    notModified: (request: FastifyRequest, reply: FastifyReply, { collection, scoped, project }: ValidatorScope): false | Promise<boolean> => {
      // Only a list read from the primary sees every change its point stands after.
      if (fastify.database.db().readPreference.mode !== 'primary') return false
      const hub = fastify.changes.hub(collection, scoped)
      if (hub.isRunning) request.validatorPoint = hub.position()
      const header = request.headers['if-none-match']
      if (header === undefined) return false
      return revalidate(request, reply, hub, header, { collection, scoped, project })
    }
  })

  /** The 304 of a request whose `If-None-Match` names a point after which nothing of `project` changed. */
  async function revalidate (request: FastifyRequest, reply: FastifyReply, hub: ChangeHub, header: string, { collection, scoped, project }: ValidatorScope): Promise<boolean> {
    if (!hub.isRunning) {
      // A client that revalidates asks again: the collection's stream is opened for its next answers,
      // and this one is answered by its query, without waiting for the check.
      fastify.changes.unavailable(collection, scoped).then((reason) => { if (reason === undefined) hub.ready().catch(() => {}) }, () => {})
      return false
    }
    const mine = requestDigest(request)
    const named = validatorsIn(header)
    namedBy.set(request, named)
    const asked = named.find((v) => v.point !== undefined && v.request === mine)
    if (asked?.point === undefined) return false
    try {
      // Every change committed before now, after the point, for this project: none, the same body.
      const point = asked.point
      const key = `${collection} ${String(project)} ${JSON.stringify(point.resumeToken)} ${String(point.after)}`
      // Within the request's own budget, which its query shares when this cannot decide.
      const gathered = await fastify.database.bounded(async (signal) => await probes.run(key, async () => await hub.readFrom(point, scoped ? project : undefined, 1, () => true, signal)), request)
      if (gathered.lost || gathered.ids.length > 0) return false
      send304(reply, { body: asked.body, request: asked.request, point: { resumeToken: gathered.point.resumeToken, ...(gathered.point.after === undefined ? {} : { after: gathered.point.after }) } })
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
    const point = request.validatorPoint
    const mine = requestDigest(request)
    const validator: Validator = { body: bodyDigest(mine, payload), request: mine, ...(point === null ? {} : { point }) }
    const header = request.headers['if-none-match']
    // `*` matches whatever answer there is (RFC 9110, 13.1.2): a list always has one.
    if (header !== undefined && (header.trim() === '*' || (namedBy.get(request) ?? validatorsIn(header)).some((v) => v.body === validator.body))) {
      send304(reply, validator)
      reply.removeHeader('content-type')
      done(null, '')
      return
    }
    reply.header('etag', etagOf(validator)).header('cache-control', 'no-cache')
    done(null, payload)
  }
  // On the routes that opt in, before compression's own onSend hook (plugins/compression.ts
  // depends on this plugin, and a route's hooks follow the global ones): one ETag for every encoding.
  fastify.addHook('onRoute', (route) => {
    if (route.config?.conditional !== true) return
    route.onSend = [tagAnswer, ...routeHooks(route.onSend)]
  })
}

export default fp(conditionalRequestsPlugin, { name: 'conditional-requests', dependencies: ['config', 'mongodb', 'changes'] })
