import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { ProblemError } from '../plugins/errors.js'
import { problemResponse } from '../schemas/problem.js'

const Status = Type.Object({ status: Type.String() })

export default async function healthRoutes (fastify: FastifyInstance) {
  fastify.get('/health', {
    schema: { tags: ['health'], summary: 'Liveness: the process answers', response: { 200: Status } }
  }, async () => ({ status: 'ok' }))

  fastify.get('/ready', {
    schema: {
      tags: ['health'],
      summary: 'Readiness: the database answers a ping, and the service is not shutting down',
      response: { 200: Status, 503: problemResponse('The database does not answer, or the service is shutting down', { status: 503, code: 'DATABASE_UNAVAILABLE', detail: 'The database does not answer' }) }
    }
  }, async () => {
    if (fastify.lifecycle.draining) throw new ProblemError(503, 'OVERLOADED', 'The service is shutting down.')
    // A ping of at most a second (the watchdog's), never a collection query.
    if (await fastify.database.watchdog.ping()) return { status: 'ready' }
    throw new ProblemError(503, 'DATABASE_UNAVAILABLE', 'The database does not answer a ping.')
  })
}
