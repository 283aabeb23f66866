// What a list asks of conditional requests (ETags, 304s): plugins/conditional-requests.ts gives
// it as the `fastify.conditional` decorator.
import type { FastifyReply, FastifyRequest } from 'fastify'

export interface ValidatorScope {
  collection: string
  /** Whether changes are routed by project (nested lists), and the path's project. */
  scoped: boolean
  project?: string
}

export interface ConditionalRequests {
  /**
   * Answers 304 when the request's `If-None-Match` names an answer of this very request
   * read after a point of the collection's stream, and nothing of `project` changed since.
   * Else notes the point this answer is read after (for its ETag) and resolves false; a
   * request without `If-None-Match` gets its false at once, with no turn of the event loop.
   */
  notModified: (request: FastifyRequest, reply: FastifyReply, scope: ValidatorScope) => false | Promise<boolean>
}
