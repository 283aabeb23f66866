import type { ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { shuttingDown } from '../schemas/problem.js'
import { SlotSet } from '../lib/slot-set.js'
import type { Lifecycle } from '../lib/lifecycle.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Where the process is in its shutdown (docs/operations.md); server.ts drives it. */
    lifecycle: Lifecycle
  }
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** How often answers that wait for their client are looked at (plugins/config.ts SEND_TIMEOUT_MS). */
const SWEEP_MS = 250

/**
 * A written answer waits `sendTimeoutMs` at most for its client to read it; then the
 * connection is reset and the answer dropped, so that a client that does not read holds no
 * memory (Node keeps what the socket has not taken). A sweep every SWEEP_MS notes the answers
 * it finds written, and resets those it noted `sendTimeoutMs` before (so an answer gets at
 * least its time, and at most SWEEP_MS more): nothing is done per request, and almost every
 * answer is gone before a sweep sees it. Returns the function that stops the sweeps.
 */
function sweepUnreadAnswers (
  answering: Iterable<ServerResponse>, exempted: WeakSet<ServerResponse>, sendTimeoutMs: number
): () => void {
  const writtenAt = new WeakMap<ServerResponse, number>()
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const response of answering) {
      if (!response.headersSent || exempted.has(response)) continue
      const since = writtenAt.get(response)
      if (since === undefined) writtenAt.set(response, now)
      else if (now - since >= sendTimeoutMs) response.socket?.resetAndDestroy()
    }
  }, SWEEP_MS)
  sweep.unref()
  return () => { clearInterval(sweep) }
}

/**
 * Draining: /ready answers 503 while requests are still served. Closing: no new connection is
 * taken, and a request that still arrives on a connection gets a problem+json 503, not
 * Fastify's own body.
 */
async function lifecyclePlugin (fastify: FastifyInstance) {
  let idle: Array<() => void> = []
  const answering = new SlotSet<ServerResponse>()
  const stopListeners: Array<() => void> = []
  const exempted = new WeakSet<ServerResponse>()
  // Node ends the connection after an answer whose Connection header says close (public, unlike `shouldKeepAlive`).
  const closeAfterAnswer = (): void => {
    for (const response of answering) if (!response.headersSent) response.setHeader('connection', 'close')
  }
  const stopped = (): void => {
    for (const listener of stopListeners.splice(0)) listener()
  }
  const lifecycle: Lifecycle = {
    draining: false,
    closing: false,
    inFlight: 0,
    stopAccepting: () => {
      lifecycle.draining = true
      lifecycle.closing = true
      closeAfterAnswer()
      if (fastify.server.listening) fastify.server.close()
      fastify.server.closeIdleConnections()
      stopped()
    },
    onStop: (listener) => { stopListeners.push(listener) },
    exempt: (response) => {
      exempted.add(response)
      return () => { exempted.delete(response) }
    },
    settled: async (ms) => {
      if (lifecycle.inFlight === 0) return
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        idle.push(() => { clearTimeout(timer); resolve() })
      })
    },
    drain: async ({ delayMs, settleMs, beforeStop, wait = sleep }) => {
      lifecycle.draining = true
      if (delayMs > 0) await wait(delayMs)
      await beforeStop?.()
      lifecycle.stopAccepting()
      await lifecycle.settled(settleMs)
    }
  }
  fastify.decorate('lifecycle', lifecycle)

  const stopSweep = sweepUnreadAnswers(answering, exempted, fastify.config.SEND_TIMEOUT_MS)
  fastify.addHook('onClose', (_instance, done) => {
    stopSweep()
    done()
  })
  // The response's 'close' comes once for every request, answered or abandoned mid-answer
  // (onResponse and onRequestAbort together miss a client that leaves while the body is written).
  function closed (this: ServerResponse): void {
    // Counted once, should a response ever close twice.
    if (!answering.delete(this)) return
    if (--lifecycle.inFlight > 0 || idle.length === 0) return
    const waiting = idle
    idle = []
    for (const resolve of waiting) resolve()
  }
  // A callback hook, as the other per-request hooks: an async one costs a promise and a turn of
  // the microtask queue on every request.
  fastify.addHook('onRequest', (_request, reply, done) => {
    lifecycle.inFlight++
    const response = reply.raw
    answering.add(response)
    // on() rather than once(), which would wrap the listener in two more objects per request:
    // closed() counts a response once however often it closes.
    response.on('close', closed)
    // From SIGTERM on, each answer closes its connection: a client reconnects, through its load
    // balancer, rather than reusing one that the end of the delay would close under it.
    if (lifecycle.draining) reply.header('connection', 'close')
    if (!lifecycle.closing) {
      done()
      return
    }
    done(shuttingDown())
  })
  fastify.addHook('preClose', async () => {
    lifecycle.draining = true
    lifecycle.closing = true
    // As at the end of a drain: the answers in flight close their connections, which close()
    // otherwise waits for until the clients' keep-alive ends.
    closeAfterAnswer()
    stopped()
  })
}

// After CORS: a browser can read the 503 of a replica shutting down.
export default fp(lifecyclePlugin, { name: 'lifecycle', dependencies: ['config', 'errors', 'cors'] })
