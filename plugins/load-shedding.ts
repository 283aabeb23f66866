import underPressure from '@fastify/under-pressure'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { RefundableStore } from '../lib/refundable-store.js'
import { takesListQuery } from './list-query.js'
import { ProblemError } from '../schemas/problem.js'

/** The 429 of a caller past its budget, who may try again in `seconds`. */
export const rateLimited = (max: number, seconds: number): ProblemError =>
  new ProblemError(429, 'RATE_LIMITED', `More than ${max} list requests a minute; retry in ${seconds} s.`, [],
    { 'retry-after': String(seconds) })

/**
 * docs/operations.md. Overload: when the event loop lags more than OVERLOAD_MAX_EVENT_LOOP_DELAY_MS,
 * lists and /ready answer 503 OVERLOADED (with Retry-After) until it recovers; /health and the
 * docs still answer. Rate limit (RATE_LIMIT_PER_MINUTE): list requests per caller — the token's
 * `sub`, else the client address — and minute, on this replica.
 */
async function loadSheddingPlugin (fastify: FastifyInstance) {
  const { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: maxDelay, RATE_LIMIT_PER_MINUTE: perMinute } = fastify.config
  if (maxDelay > 0) {
    await fastify.register(underPressure, {
      maxEventLoopDelay: maxDelay,
      // One sample per allowed delay (at most a second): a lag shows for at least that long.
      sampleInterval: Math.min(1000, Math.max(10, maxDelay)),
      pressureHandler: async (request) => {
        if (!takesListQuery(request.routeOptions.config) && request.routeOptions.url !== '/ready') return
        throw new ProblemError(503, 'OVERLOADED', 'The service is overloaded; retry shortly.')
      }
    })
  }
  if (perMinute === undefined) return
  // One budget per caller for all the lists together. A route with a `rateLimit` config of its
  // own gets a store of its own (@fastify/rate-limit's onRoute: `store.child()`), which would
  // give a caller that many requests a minute on every list; so the limit is global, and every
  // route that is not a list opts out. Registered before the plugin's own onRoute hook, which
  // reads that config.
  fastify.addHook('onRoute', (route) => {
    if (!takesListQuery(route.config)) route.config = { ...route.config, rateLimit: false }
  })
  const keyOf = (request: FastifyRequest): string => request.principal?.subject === undefined
    ? `ip:${request.ip}`
    : `sub:${request.principal.subject}`
  let store: RefundableStore | undefined
  // The plugin makes its store itself (`new Store(options)`): this subclass hands it over.
  class KeptStore extends RefundableStore {
    constructor () {
      super()
      store = this
    }
  }
  // A 304 does not count against the limit (docs/conditional-requests.md): it is given back.
  // Once the answer is final: a route's own onSend hooks (the ETag's) run after the global ones.
  fastify.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode === 304 && reply.routeOptions.config.conditional === true) store?.refund(keyOf(request))
    done()
  })
  await fastify.register(rateLimit, {
    global: true,
    store: KeptStore,
    // After authentication (onRequest), so that the caller is the token's subject.
    hook: 'preHandler',
    max: perMinute,
    timeWindow: 60_000,
    enableDraftSpec: true,
    keyGenerator: keyOf,
    errorResponseBuilder: (_request, context) => rateLimited(context.max, Math.ceil(context.ttl / 1000))
  })
}

export default fp(loadSheddingPlugin, {
  name: 'load-shedding',
  dependencies: ['config', 'errors', 'access-control', 'conditional-requests']
})
