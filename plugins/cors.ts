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
 * Whether a request gets CORS headers: its origin is allowed, and it is no OPTIONS but a preflight
 * (an OPTIONS without Access-Control-Request-Method is the method it names, refused with 405).
 */
function granted (origins: '*' | string[], request: FastifyRequest): boolean {
  const origin = request.headers.origin
  return origin !== undefined && (origins === '*' || origins.includes(origin)) &&
    (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] !== undefined)
}

/**
 * The CORS headers @fastify/cors's hook puts on an answer, for what the router refuses before any
 * hook runs (errors.ts' frameworkErrors: a path segment too long, a bad escape), so that a browser
 * reads that problem as it reads the others rather than seeing a network error.
 */
export function corsHeadersBeforeHooks (request: FastifyRequest): Record<string, string> {
  const setting = request.server.config.CORS_ORIGINS
  if (setting === undefined) return {}
  const origins = corsOrigins(setting)
  // The plugin's origin is decided per request, so its hook always adds Vary: Origin.
  if (!granted(origins, request)) return { vary: 'Origin' }
  return {
    vary: 'Origin',
    'access-control-allow-origin': origins === '*' ? '*' : String(request.headers.origin),
    'access-control-expose-headers': EXPOSED_HEADERS.join(', ')
  }
}

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
  const grant: FastifyCorsOptions = {
    origin: origins === '*'
      ? '*'
      : (origin, callback) => { callback(null, origin !== undefined && origins.includes(origin) ? origin : false) },
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
      callback(null, granted(origins, request) ? grant : refused)
    }
  })
}

export default fp(corsPlugin, { name: 'cors', dependencies: ['config'] })
