// A list's change feed (docs/changes.md): `GET <list>/changes`. Without `since` it lists the
// filter's matches by `_id` (upsert events), then follows the collection's changes from a point
// taken before the listing began. A change is routed to the projects of its pre- and
// post-images; the changed documents are then read again with the feed's own filter and
// fields, so that MongoDB decides what matches: a document found is an upsert (as it is now),
// one not found a remove. feed-handler.ts answers it, feed-steps.ts reads each answer's worth.
import type { FastifyInstance } from 'fastify'
import { compileFeedQuery } from '../list-query/compile-list-query.js'
import { ProblemError } from '../schemas/problem.js'
import { getAndHeadOnly } from '../list-endpoint/get-only.js'
import { FeedHandler, type FeedRouteOptions } from './feed-handler.js'
import { feedOpenApi } from './feed-openapi.js'

export function feedRoute (fastify: FastifyInstance, options: FeedRouteOptions): void {
  const refused = compileFeedQuery(options.badRequestExample, options.spec)
  if (refused.ok) throw new Error(`${options.badRequestExample} must be refused by every feed`)
  fastify.changes.declare(options.collection, options.scoped)
  const handler = new FeedHandler(fastify, options)
  fastify.get(handler.feedUrl, {
    schema: feedOpenApi(options, ProblemError.badRequest(refused.problems)),
    config: { feedQuery: options.spec },
    // The feed-query hook checks the query string itself.
    validatorCompiler: () => () => true,
    // Never reused, refusals included (a 404 is cacheable by default, RFC 9110, 15.1): each
    // answer follows its own position. A stream writes its own headers.
    onSend: (_request, reply, payload, done) => {
      reply.header('cache-control', 'no-store')
      done(null, payload)
    }
  }, handler.feed)
  getAndHeadOnly(fastify, handler.feedUrl, 'change feeds', { 'cache-control': 'no-store' })
}
