import t from 'tap'
import { start } from '../../offline-mongodb/server.js'
import { build } from '../helpers/build.js'

t.test('GET /health answers while the process lives', async (t) => {
  const fastify = await build(t)
  const res = await fastify.inject('/health')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
})

t.test('GET /ready answers 200 when the database answers a ping', async (t) => {
  const fastify = await build(t)
  const res = await fastify.inject('/ready')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ready' })
})

t.test('GET /ready answers 503 problem+json once the database is gone', async (t) => {
  const db = await start()
  const fastify = await build(t, { databaseUri: db.uri })
  t.equal((await fastify.inject('/ready')).statusCode, 200)
  await db.close()
  const res = await fastify.inject('/ready')
  t.equal(res.statusCode, 503)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.match(res.json(), { status: 503, code: 'DATABASE_UNAVAILABLE', title: 'Service Unavailable' })
  t.equal((await fastify.inject('/health')).statusCode, 200, 'liveness does not depend on the database')
})
