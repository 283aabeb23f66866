import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ProblemError } from './errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where the process is in its shutdown (CONTRACT.md §8); server.ts drives it. */
    lifecycle: Lifecycle
  }
}

export interface Lifecycle {
  /** /ready answers 503 (SIGTERM received). */
  draining: boolean
  /** New requests are refused with 503. */
  closing: boolean
  /** Requests being answered now. */
  inFlight: number
  /** Resolves when no request is in flight, or after `ms`. */
  settled: (ms: number) => Promise<void>
}

/**
 * Draining: /ready answers 503 while requests are still served. Closing: requests that still
 * arrive (on kept-alive connections) get a problem+json 503, not Fastify's own body.
 */
async function lifecyclePlugin (fastify: FastifyInstance) {
  let idle: Array<() => void> = []
  const lifecycle: Lifecycle = {
    draining: false,
    closing: false,
    inFlight: 0,
    settled: async (ms) => {
      if (lifecycle.inFlight === 0) return
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        idle.push(() => { clearTimeout(timer); resolve() })
      })
    }
  }
  fastify.decorate('lifecycle', lifecycle)
  // A request is counted once, whichever of onResponse and onRequestAbort comes.
  const counted = new WeakSet<FastifyRequest>()
  fastify.addHook('onRequest', async (request) => {
    counted.add(request)
    lifecycle.inFlight++
  })
  const done = async (request: FastifyRequest) => {
    if (!counted.delete(request)) return
    if (--lifecycle.inFlight > 0 || idle.length === 0) return
    const waiting = idle
    idle = []
    for (const resolve of waiting) resolve()
  }
  fastify.addHook('onResponse', done)
  fastify.addHook('onRequestAbort', done)
  fastify.addHook('preClose', async () => {
    lifecycle.draining = true
    lifecycle.closing = true
  })
  fastify.addHook('onRequest', async (_request, reply) => {
    if (!lifecycle.closing) return
    reply.header('connection', 'close')
    throw new ProblemError(503, 'OVERLOADED', 'The service is shutting down; retry, another replica will answer.', [], { 'retry-after': '1' })
  })
}

export default fp(lifecyclePlugin, { name: 'lifecycle', dependencies: ['errors'] })
