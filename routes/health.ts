import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { getAndHeadOnly } from '../list-endpoint/get-only.js'
import { ProblemError, problemResponse } from '../schemas/problem.js'

const Status = Type.Object({ status: Type.String() })

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
  getAndHeadOnly(fastify, '/health', 'the health checks')
  getAndHeadOnly(fastify, '/ready', 'the health checks')

  // Probes ask every few seconds: a change of state (ready, not ready, shutting down) is logged
  // when it happens, at info, with the reason of that moment; never per answer.
  let previous: 'ready' | 'not ready' | 'draining' = 'ready'
  const report = (state: typeof previous, reason = ''): void => {
    if (state === previous) return
    previous = state
    fastify.log.info(state === 'ready' ? '/ready answers 200 again' : `/ready answers 503: ${reason}`)
  }

  fastify.get('/ready', {
    schema: {
      tags: ['health'],
      summary: 'Readiness, from what the service knows now: the database answers its pings, ' +
        'and the service is not starting or shutting down',
      response: {
        200: Status,
        503: problemResponse('The database does not answer, or the service is shutting down',
          notReady('DATABASE_UNAVAILABLE', 'Not ready: the database does not answer a ping.'))
      }
    }
  }, async () => {
    if (fastify.lifecycle.draining) {
      report('draining', 'the service is shutting down')
      throw notReady('OVERLOADED', 'The service is shutting down.')
    }
    // What the readiness checks already know (its background pings, the driver's view of the
    // servers): the probe never waits on the database, and never queries a collection.
    const readiness = fastify.database.readiness.readiness()
    if (readiness.ready) {
      report('ready')
      return { status: 'ready' }
    }
    report('not ready', readiness.reason)
    throw notReady('DATABASE_UNAVAILABLE', `Not ready: ${readiness.reason}.`)
  })
}
