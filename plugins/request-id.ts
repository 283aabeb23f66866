import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** docs/operations.md: an incoming X-Request-Id is kept only when it is this; otherwise one is made. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The request's id: its X-Request-Id when valid, else a new UUID (app.ts's genReqId, errors.ts). */
export function requestIdOf (request: IncomingMessage): string {
  const id = request.headers['x-request-id']
  return typeof id === 'string' && REQUEST_ID.test(id) ? id : randomUUID()
}

/**
 * docs/operations.md: every answer carries its request's id (validated or made by requestIdOf,
 * app.ts's genReqId), which every log line of the request (`requestId`) and every problem body carry too.
 */
async function requestIdPlugin (fastify: FastifyInstance) {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
}

export default fp(requestIdPlugin, { name: 'request-id' })
