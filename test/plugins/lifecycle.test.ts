// The drain waits for in-flight requests: the count must come back to zero whatever the client
// does, or a shutdown would wait its whole bound for requests that no longer exist.
import t from 'tap'
import { build } from '../helpers/build.js'

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('answered, failed and abandoned requests all leave the in-flight count', async (t) => {
  const fastify = await build(t, {
    extend: (app) => {
      app.get('/test/slow', async () => { await sleep(300); return { ok: true } })
      app.get('/test/big', async (_request, reply) => reply.type('text/plain').send('x'.repeat(8 * 1024 * 1024)))
    }
  })
  const address = await fastify.listen({ port: 0, host: '127.0.0.1' })
  await fetch(`${address}/projects`)
  await fetch(`${address}/nowhere`)
  const slow = new AbortController()
  const abandoned = fetch(`${address}/test/slow`, { signal: slow.signal }).catch(() => undefined)
  await sleep(50)
  t.equal(fastify.lifecycle.inFlight, 1, 'one request in flight')
  slow.abort()
  await abandoned
  const big = new AbortController()
  const response = await fetch(`${address}/test/big`, { signal: big.signal })
  big.abort() // leaves while the body is being written
  await response.text().catch(() => undefined)
  await sleep(400)
  t.equal(fastify.lifecycle.inFlight, 0, 'back to zero')
  const started = Date.now()
  await fastify.lifecycle.settled(5000)
  t.ok(Date.now() - started < 100, 'settled at once')
  // The test process's fetch keeps its connections alive; the service's own close is tested in test/faults.
  fastify.server.closeAllConnections()
})
