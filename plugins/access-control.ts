import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import { tokenVerifier, type Principal } from '../access-control/verify-token.js'
import { NO_TOKEN_MESSAGE } from '../list-endpoint/list-problems.js'
import { routeHooks } from '../lib/route-hooks.js'
import { ProblemError } from '../schemas/problem.js'
import { takesListQuery } from './list-query.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Authentication failures by reason (expired, bad signature, …), for the metrics. */
    authFailures: Map<string, number>
  }
  interface FastifyRequest {
    /** The caller of a protected list with AUTH_MODE=jwt; null when access control is off. */
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** A list anyone may read, even with AUTH_MODE=jwt (`/projects/public`). */
    open?: boolean
  }
}

const REALM = 'Bearer realm="listing-api"'

/** How many Authorization fields the request carries, as sent (names at the even places). */
function authorizationHeaders (raw: string[]): number {
  let count = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.length === 13 && raw[i]?.toLowerCase() === 'authorization') count++
  }
  return count
}

/**
 * docs/access-control.md. With AUTH_MODE=jwt, every list, change feed and counts route whose list
 * is not `open` requires a bearer token; its projects claim says which projects the caller reads
 * (list-handler.ts applies it).
 * Checked first, before the query string, so that nothing about the request is judged for a
 * caller who is not known.
 */
async function accessControlPlugin (fastify: FastifyInstance, { now }: { now?: () => number }) {
  const config = fastify.config
  const failures = new Map<string, number>()
  fastify.decorate('authFailures', failures)
  fastify.decorateRequest('principal', null)
  if (config.AUTH_MODE !== 'jwt') {
    fastify.log.warn('AUTH_MODE is not jwt: every caller can read every project ' +
      '(set AUTH_MODE=jwt and the JWT_* variables to require tokens)')
    return
  }
  const verify = tokenVerifier({
    jwksUri: config.JWT_JWKS_URI,
    publicKey: config.JWT_PUBLIC_KEY,
    algorithms: config.JWT_ALGORITHMS.split(','),
    issuer: config.JWT_ISSUER as string,
    audience: config.JWT_AUDIENCE as string,
    projectsClaim: config.JWT_PROJECTS_CLAIM,
    // Waiting for keys counts against the request's time, as its query does.
    keyWaitMs: config.QUERY_TIMEOUT_MS,
    onKeySetFailure: (reason) => {
      fastify.log.warn(`the key set at ${config.JWT_JWKS_URI ?? ''} could not be used: ${reason}; ` +
        'tokens whose key is not cached answer 503 AUTH_UNAVAILABLE')
    },
    // The app's clock (AppOptions in app.ts): a test moves it past the key set's pauses.
    now
  })
  // The keys are fetched once at start, so that the first callers do not wait for them.
  if (verify.keySet !== undefined) fastify.addHook('onReady', async () => { verify.keySet?.prefetch().catch(() => {}) })
  const countFailure = (reason: string): void => { failures.set(reason, (failures.get(reason) ?? 0) + 1) }
  const authenticate: onRequestHookHandler = async function (request, reply) {
    // Node keeps the first of several: which one a proxy added is anyone's guess (RFC 6750, 3.1).
    if (authorizationHeaders(request.raw.rawHeaders) > 1) {
      const reason = 'several authorization headers'
      countFailure(reason)
      request.log.info({ reason }, 'authentication failed')
      reply.header('www-authenticate',
        `${REALM}, error="invalid_request", error_description="more than one Authorization header"`)
      throw ProblemError.about('authorization', 400, 'BAD_REQUEST',
        'The request carries more than one Authorization header; send one.')
    }
    const result = await verify(request.headers.authorization)
    if (result.ok) {
      request.principal = result.principal
      return
    }
    countFailure(result.reason)
    if (result.unavailable !== undefined) {
      const retryAfter = String(Math.max(1, Math.ceil(result.unavailable.retryAfterMs / 1000)))
      const problem = ProblemError.about('authorization', 503, 'AUTH_UNAVAILABLE',
        'The keys that verify bearer tokens cannot be obtained from the identity provider now; retry shortly.',
        { 'retry-after': retryAfter })
      problem.logged = false // the key set logs its failed fetches
      throw problem
    }
    request.log.info({ reason: result.reason }, 'authentication failed')
    reply.header('www-authenticate', result.tokenSent
      ? `${REALM}, error="invalid_token", error_description="${result.reason}"`
      : REALM)
    const message = result.tokenSent ? `The bearer token was refused (${result.reason})` : NO_TOKEN_MESSAGE
    throw ProblemError.about('authorization', 401, 'UNAUTHENTICATED', message)
  }
  fastify.addHook('onRoute', (route) => {
    if (!takesListQuery(route.config) || route.config?.open === true) return
    route.onRequest = [authenticate, ...routeHooks(route.onRequest)]
  })
}

export default fp(accessControlPlugin, { name: 'access-control', dependencies: ['config', 'errors', 'list-query'] })
