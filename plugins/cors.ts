import fastifyCors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { corsOrigins } from './config.js'

/**
 * What a browser may send and read (docs/operations.md, "Browsers (CORS)"); the RateLimit-* names
 * are the draft's (load-shedding.ts).
 */
const ALLOWED_HEADERS = ['Authorization', 'X-Request-Id', 'If-None-Match']
const EXPOSED_HEADERS = [
  'Link', 'ETag', 'X-Request-Id', 'Retry-After',
  'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'
]
/** Browsers may cache a preflight this long (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE_S = 600

/**
 * CORS_ORIGINS: browsers on those origins may call the lists (GET and HEAD) with a bearer token,
 * a request id and If-None-Match, and read the paging, ETag, id and retry headers. Unset, nothing of CORS is
 * registered: no header, no preflight answer. A request from another origin, or an OPTIONS
 * that is not a preflight, gets no CORS header and goes on as any request (OPTIONS on a list
 * is then 405, as every other method but GET and HEAD).
 */
async function corsPlugin (fastify: FastifyInstance) {
  const setting = fastify.config.CORS_ORIGINS
  if (setting === undefined) return
  const origins = corsOrigins(setting)
  const allowed = (origin: string): boolean => origins === '*' || origins.includes(origin)
  const granted: FastifyCorsOptions = {
    origin: origins === '*'
      ? '*'
      : (origin, callback) => { callback(null, origin !== undefined && allowed(origin) ? origin : false) },
    methods: ['GET', 'HEAD'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    strictPreflight: false
  }
  const refused: FastifyCorsOptions = { origin: false }
  await fastify.register(fastifyCors, {
    hideOptionsRoute: true,
    delegator: (request: FastifyRequest, callback) => {
      const origin = request.headers.origin
      const preflightHeader = request.headers['access-control-request-method']
      const usable = origin !== undefined && allowed(origin) &&
        (request.method !== 'OPTIONS' || preflightHeader !== undefined)
      callback(null, usable ? granted : refused)
    }
  })
}

export default fp(corsPlugin, { name: 'cors', dependencies: ['config'] })
