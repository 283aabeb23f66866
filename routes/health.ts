import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { ProblemError, problemResponse } from '../schemas/problem.js'

const Status = Type.Object({ status: Type.String() })

const NO_PING = 'The database does not answer a ping.'

/** A 503 of /ready: an answer about the state, not a fault of the request (logged on change only). */
function notReady (code: 'OVERLOADED' | 'DATABASE_UNAVAILABLE', detail: string): ProblemError {
  const error = new ProblemError(503, code, detail)
  error.logged = false
  return error
}

export default async function healthRoutes (fastify: FastifyInstance) {
  fastify.get('/health', {
    schema: { tags: ['health'], summary: 'Liveness: the process answers', response: { 200: Status } }
  }, async () => ({ status: 'ok' }))

  // Probes ask every few seconds: a state is logged when it changes, at info, never per answer.
  let previous = 'ready'
  const report = (state: string): void => {
    if (state === previous) return
    previous = state
    fastify.log.info(state === 'ready' ? '/ready answers 200 again' : `/ready answers 503: ${state}`)
  }

  fastify.get('/ready', {
    schema: {
      tags: ['health'],
      summary: 'Readiness: the database answers a ping, and the service is not shutting down',
      response: { 200: Status, 503: problemResponse('The database does not answer, or the service is shutting down', notReady('DATABASE_UNAVAILABLE', NO_PING)) }
    }
  }, async () => {
    if (fastify.lifecycle.draining) {
      report('the service is shutting down')
      throw notReady('OVERLOADED', 'The service is shutting down.')
    }
    // A ping (the watchdog's, bounded by the query budget), never a collection query.
    if (await fastify.database.watchdog.ping()) {
      report('ready')
      return { status: 'ready' }
    }
    report('the database does not answer a ping')
    throw notReady('DATABASE_UNAVAILABLE', NO_PING)
  })
}
