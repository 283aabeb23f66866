import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * docs/operations.md: every answer carries its request's id (validated or made in app.ts's
 * genReqId), which every log line of the request (`requestId`) and every problem body carry too.
 */
async function requestIdPlugin (fastify: FastifyInstance) {
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
}

export default fp(requestIdPlugin, { name: 'request-id' })
