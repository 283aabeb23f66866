// The drain waits for in-flight requests: the count must come back to zero whatever the client
// does, or a shutdown would wait its whole bound for requests that no longer exist.
import http from 'node:http'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import type { Test } from 'tap'
import { build } from '../helpers/build.js'
import { until } from '../helpers/until.js'

/** 'settled' if `work` settles within the current turn of the event loop, else 'pending'. */
const firstOf = async (work: Promise<unknown>): Promise<string> =>
  await Promise.race([work.then(() => 'settled'),
    new Promise<string>((resolve) => setImmediate(() => resolve('pending')))])

/** A service with a route `/test/slow` that answers its latest request when the test calls `answerSlow()`. */
async function withSlowRoute (
  t: Test, extend: (app: FastifyInstance) => void = () => {}
): Promise<{ fastify: FastifyInstance, answerSlow: () => void }> {
  let answer = (): void => {}
  const fastify = await build(t, {
    extend: (app) => {
      app.get('/test/slow', async () => {
        await new Promise<void>((resolve) => { answer = resolve })
        return { ok: true }
      })
      extend(app)
    }
  })
  return { fastify, answerSlow: () => { answer() } }
}

t.test('answered, failed and abandoned requests all leave the in-flight count', async (t) => {
  // The slow request answers when the test lets it, after its client has gone.
  const { fastify, answerSlow } = await withSlowRoute(t, (app) => {
    app.get('/test/big', async (_request, reply) => reply.type('text/plain').send('x'.repeat(8 * 1024 * 1024)))
  })
  const address = await fastify.listen({ port: 0, host: '127.0.0.1' })
  await fetch(`${address}/projects`)
  await fetch(`${address}/nowhere`)
  const slow = new AbortController()
  const abandoned = fetch(`${address}/test/slow`, { signal: slow.signal }).catch(() => undefined)
  t.ok(await until(() => fastify.lifecycle.inFlight === 1, 10_000), 'one request in flight')
  slow.abort()
  await abandoned
  answerSlow()
  const big = new AbortController()
  const response = await fetch(`${address}/test/big`, { signal: big.signal })
  big.abort() // leaves while the body is being written
  await response.text().catch(() => undefined)
  t.ok(await until(() => fastify.lifecycle.inFlight === 0, 10_000), 'back to zero')
  t.equal(await firstOf(fastify.lifecycle.settled(5000)), 'settled', 'settled at once, without waiting for its bound')
  // The test process's fetch keeps its connections alive; the service's own close is tested in test/faults.
  fastify.server.closeAllConnections()
})

t.test('the shutdown delay: new requests answered while it lasts, refused once it is over, ' +
  'those in flight finished', async (t) => {
  const { fastify, answerSlow } = await withSlowRoute(t)
  // The delay ends when the test says: nothing here waits for it to pass.
  const waited: number[] = []
  let endDelay = (): void => {}
  const wait = async (ms: number): Promise<void> => {
    waited.push(ms)
    await new Promise<void>((resolve) => { endDelay = resolve })
  }
  const steps: string[] = []
  const drained = fastify.lifecycle.drain({
    delayMs: 5000, settleMs: 60_000, wait, beforeStop: async () => { steps.push('before stop') }
  })
  t.same(waited, [5000], 'the delay asked for is waited')
  t.equal((await fastify.inject('/ready')).statusCode, 503, '/ready is 503 at once')
  const during = await fastify.inject('/projects')
  t.equal(during.statusCode, 200, 'a new request during the delay is answered')
  t.equal(during.headers.connection, 'close', 'and its connection closed after it, so that the client reconnects')
  const slow = fastify.inject('/test/slow')
  t.ok(await until(() => fastify.lifecycle.inFlight === 1, 10_000), 'a request in flight as the delay ends')
  t.same(steps, [], 'nothing stopped during the delay')
  t.equal(fastify.lifecycle.closing, false)
  endDelay()
  t.ok(await until(() => fastify.lifecycle.closing, 10_000), 'once the delay is over, no new request is taken')
  t.same(steps, ['before stop'], 'what must stop before the refusals has stopped')
  const refused = await fastify.inject('/projects')
  t.equal(refused.statusCode, 503, 'a new request is refused')
  t.match(refused.json(), { code: 'OVERLOADED' })
  t.equal(refused.headers.connection, 'close')
  t.equal(await firstOf(drained), 'pending', 'the drain waits for the request in flight')
  answerSlow()
  t.equal((await slow).statusCode, 200, 'which is answered')
  t.equal(await firstOf(drained), 'settled', 'and then the drain ends, long before its bound')
})

t.test('close() without a drain: an answer in flight closes its connection, ' +
  'and close() does not wait for the client', async (t) => {
  const { fastify, answerSlow } = await withSlowRoute(t)
  const address = await fastify.listen({ port: 0, host: '127.0.0.1' })
  // A client that keeps its connections alive, as an HTTP client library does.
  const agent = new http.Agent({ keepAlive: true })
  t.teardown(() => { agent.destroy() })
  const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
    http.get(`${address}/test/slow`, { agent }, (res) => {
      res.resume()
      res.on('end', () => { resolve(res) })
    }).on('error', reject)
  })
  t.ok(await until(() => fastify.lifecycle.inFlight === 1, 10_000), 'a request in flight')
  let closed = false
  fastify.close().then(() => { closed = true }, () => {})
  // Answered once closing has begun (as a waiting feed is woken by it), after Fastify closed the idle connections.
  t.ok(await until(() => fastify.lifecycle.closing, 10_000), 'closing')
  answerSlow()
  const res = await answered
  t.equal(res.statusCode, 200, 'it is answered')
  t.equal(res.headers.connection, 'close', 'with its connection closed after it')
  // The agent still holds its connection: close() must end without it letting go.
  t.ok(await until(() => closed, 10_000), 'close() ended without the client letting go of its connection')
})

t.test('a response that closes twice leaves the in-flight count once', async (t) => {
  let closes = 0
  const { fastify } = await withSlowRoute(t, (app) => {
    app.get('/test/close-twice', {
      // Once it has been answered, its 'close' comes a second time.
      onResponse: (_request, reply, done) => { reply.raw.emit('close'); done() }
    }, async (_request, reply) => {
      reply.raw.on('close', () => { closes++ })
      return { ok: true }
    })
  })
  t.equal((await fastify.inject('/test/close-twice')).statusCode, 200)
  t.ok(await until(() => closes === 2, 10_000), 'closed twice')
  t.equal(fastify.lifecycle.inFlight, 0, 'counted once, not below zero')
})
