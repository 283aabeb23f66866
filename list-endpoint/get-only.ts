import type { FastifyInstance } from 'fastify'
import { ProblemError } from '../schemas/problem.js'

/**
 * docs/query-language.md, "The lists": every other method on a GET path (a list, a change feed)
 * is 405 with `Allow: GET, HEAD`, refused before the body is read or the project looked up;
 * `headers` are the path's own (a feed's no-store).
 */
export function getAndHeadOnly (
  fastify: FastifyInstance, url: string, what: string, headers: Record<string, string> = {}
): void {
  fastify.route({
    method: fastify.supportedMethods.filter((method) => method !== 'GET' && method !== 'HEAD'),
    url,
    schema: { hide: true },
    onRequest: async (request) => {
      throw ProblemError.about(
        'method', 405, 'METHOD_NOT_ALLOWED', `${request.method} is not allowed here: ${what} answer GET and HEAD`,
        { ...headers, allow: 'GET, HEAD' }
      )
    },
    handler: async () => undefined
  })
}
