import path from 'node:path'
import fastifyAutoload from '@fastify/autoload'
import fp from 'fastify-plugin'
import { LogController, type FastifyHttpOptions, type FastifyInstance } from 'fastify'
import type { Server } from 'node:http'
import { trustProxy } from './plugins/config.js'
import type { Config } from './schemas/config.js'
import { clientErrorHandler, frameworkErrors } from './plugins/errors.js'
import { requestIdOf } from './plugins/request-id.js'
import { lazyQuery } from './lib/lazy-query.js'
import { sharedSerializers } from './lib/shared-serializers.js'

export interface AppOptions {
  /** The configuration with MONGODB_URI resolved to the database chosen for this process. */
  config: Config
  /**
   * The clock of what the app remembers for a while (the project cache, the key set's cool-down
   * and pauses): Date.now unless a test sets one.
   */
  now?: () => number
}

/** Fastify options shared by server.ts and the test helper, so tests run the server as deployed. */
export function serverOptions (config: Config, { pretty = false } = {}): FastifyHttpOptions<Server> {
  return {
    // pino-pretty (a development dependency) on a terminal outside production: process/service.ts decides.
    logger: pretty
      ? {
          level: config.LOG_LEVEL,
          transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } }
        }
      : { level: config.LOG_LEVEL },
    // Per-request log lines cost more than a list request itself; they are kept for debug and trace.
    logController: new LogController({
      disableRequestLogging: config.LOG_LEVEL !== 'debug' && config.LOG_LEVEL !== 'trace',
      requestIdLogLabel: 'requestId'
    }),
    // Nothing of ours reads request.query (lists read their raw query string): parsed only if read.
    routerOptions: { ignoreTrailingSlash: true, querystringParser: lazyQuery },
    // Every time limit a client could stretch (docs/operations.md, "Slow clients"): the request's
    // head and body, an idle kept-alive connection; Node checks the first two every
    // connectionsCheckingInterval (30 s by default: a slowloris client would get up to that
    // much more). How long a written answer may wait to be read is plugins/lifecycle.ts's.
    // Without Host, Node would answer a bare 400 itself: plugins/errors.ts refuses it as a problem.
    http: {
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: 1000,
      requireHostHeader: false
    },
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    // Unset: X-Forwarded-* are ignored, so no caller chooses its address, scheme or host.
    trustProxy: trustProxy(config.TRUST_PROXY),
    // Fastify 5 trusts an incoming id as it is: ours is validated first (plugins/request-id.ts sends it back).
    requestIdHeader: false,
    genReqId: requestIdOf,
    // What the HTTP layer refuses before a route runs is problem+json too (docs/errors.md).
    frameworkErrors,
    clientErrorHandler,
    // Requests arriving while closing get our problem+json 503 (plugins/lifecycle.ts), not Fastify's body.
    return503OnClosing: false,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true } },
    // One serializer per distinct response schema, not one per route and status (lib/shared-serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers() } }
  }
}

/** Composes the service: plugins first (awaited), then the routes. Knows nothing of the process. */
async function app (fastify: FastifyInstance, opts: AppOptions) {
  await fastify.register(fastifyAutoload, {
    dir: path.join(import.meta.dirname, 'plugins'),
    options: { ...opts }
  })
  await fastify.register(fastifyAutoload, {
    dir: path.join(import.meta.dirname, 'routes'),
    autoHooks: true,
    cascadeHooks: true,
    routeParams: true,
    options: { ...opts }
  })
}

// Not encapsulated: the error and not-found handlers answer for the whole server.
export default fp(app, { name: 'listing-api' })
