// The drain waits for in-flight requests: the count must come back to zero whatever the client
// does, or a shutdown would wait its whole bound for requests that no longer exist.
import t from 'tap'
import { build } from '../helpers/build.js'
import { until } from '../helpers/until.js'

t.test('answered, failed and abandoned requests all leave the in-flight count', async (t) => {
  // The slow request answers when the test lets it, after its client has gone.
  let answerSlow = (): void => {}
  const fastify = await build(t, {
    extend: (app) => {
      app.get('/test/slow', async () => { await new Promise<void>((resolve) => { answerSlow = resolve }); return { ok: true } })
      app.get('/test/big', async (_request, reply) => reply.type('text/plain').send('x'.repeat(8 * 1024 * 1024)))
    }
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
  const started = Date.now()
  await fastify.lifecycle.settled(5000)
  t.ok(Date.now() - started < 100, 'settled at once')
  // The test process's fetch keeps its connections alive; the service's own close is tested in test/faults.
  fastify.server.closeAllConnections()
})
