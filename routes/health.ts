import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { ProblemError } from '../plugins/errors.js'
import { problemResponse } from '../schemas/problem.js'

/** A ping slower than this counts as "not answering": readiness must answer fast. */
const READY_PING_TIMEOUT_MS = 1000

const Status = Type.Object({ status: Type.String() })

export default async function healthRoutes (fastify: FastifyInstance) {
  fastify.get('/health', {
    schema: { tags: ['health'], summary: 'Liveness: the process answers', response: { 200: Status } }
  }, async () => ({ status: 'ok' }))

  fastify.get('/ready', {
    schema: {
      tags: ['health'],
      summary: 'Readiness: the database answers a ping',
      response: { 200: Status, 503: problemResponse('The database does not answer') }
    }
  }, async () => {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('ping timed out')), READY_PING_TIMEOUT_MS)
    })
    try {
      await Promise.race([fastify.mongo.db?.command({ ping: 1 }), timeout])
      return { status: 'ready' }
    } catch {
      throw new ProblemError(503, 'DATABASE_UNAVAILABLE', 'The database does not answer a ping.')
    } finally {
      clearTimeout(timer)
    }
  })
}
