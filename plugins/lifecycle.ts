import type { FastifyInstance } from 'fastify'
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
  const done = () => {
    if (--lifecycle.inFlight > 0 || idle.length === 0) return
    const waiting = idle
    idle = []
    for (const resolve of waiting) resolve()
  }
  // The response's 'close' comes once for every request, answered or abandoned mid-answer
  // (onResponse and onRequestAbort together miss a client that leaves while the body is written).
  fastify.addHook('onRequest', async (_request, reply) => {
    lifecycle.inFlight++
    reply.raw.once('close', done)
    if (!lifecycle.closing) return
    reply.header('connection', 'close')
    throw new ProblemError(503, 'OVERLOADED', 'The service is shutting down; retry, another replica will answer.')
  })
  fastify.addHook('preClose', async () => {
    lifecycle.draining = true
    lifecycle.closing = true
  })
}

export default fp(lifecyclePlugin, { name: 'lifecycle', dependencies: ['errors'] })
