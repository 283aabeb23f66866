import { Type } from '@sinclair/typebox'
import { MongoServerError } from 'mongodb'
import t from 'tap'
import { toProblem } from '../../plugins/errors.js'
import { start } from '../../offline-mongodb/server.js'
import { build } from '../helpers/build.js'

t.test('an unknown route is a 404 problem+json', async (t) => {
  const fastify = await build(t)
  const res = await fastify.inject('/no/such/route?x=1')
  t.equal(res.statusCode, 404)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.match(res.json(), {
    type: 'about:blank',
    title: 'Not Found',
    status: 404,
    code: 'NOT_FOUND',
    detail: 'No route GET /no/such/route; the routes are listed at /docs',
    errors: [{
      param: 'path',
      pointer: '',
      code: 'NOT_FOUND',
      message: 'No route GET /no/such/route; the routes are listed at /docs'
    }],
    requestId: String
  })
})

t.test('an unexpected throw is a 500 problem+json without internals', async (t) => {
  const fastify = await build(t, {
    extend: (app) => app.get('/boom', async () => {
      throw new Error('secret: connection string mongodb://admin:pw@db')
    })
  })
  const res = await fastify.inject('/boom')
  t.equal(res.statusCode, 500)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.match(res.json(), { status: 500, code: 'INTERNAL_ERROR', title: 'Internal Server Error' })
  t.notMatch(res.body, /secret|mongodb:|stack|at /, 'no message, stack or driver detail')
})

t.test('a schema validation failure is a 400 problem+json listing each problem', async (t) => {
  const fastify = await build(t, {
    extend: (app) => app.get('/typed',
      { schema: { querystring: Type.Object({ n: Type.Integer() }, { additionalProperties: false }) } },
      async () => ({}))
  })
  const res = await fastify.inject('/typed?n=x&extra=1')
  t.equal(res.statusCode, 400)
  const body = res.json()
  t.equal(body.status, 400)
  t.match(body, { code: 'UNKNOWN_PARAMETER', detail: "Unknown parameter 'extra'" })
  t.match(body.errors, [
    { param: 'extra', code: 'UNKNOWN_PARAMETER' },
    { param: 'n', code: 'INVALID_VALUE', message: /must be integer/ }
  ], 'each problem, the unknown parameter first')
  t.equal(body.errors.length, 2)
})

t.test('a query over maxTimeMS maps to 503 QUERY_TIMEOUT without the driver message', async (t) => {
  const timeout = toProblem(new MongoServerError({
    code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit'
  }))
  t.match(timeout, { status: 503, code: 'QUERY_TIMEOUT' })
  t.notMatch(timeout.detail, /exceeded time limit/)
})

t.test('a query while the database is gone is a 503 DATABASE_UNAVAILABLE without driver detail', async (t) => {
  const db = await start()
  const fastify = await build(t, {
    databaseUri: db.uri,
    extend: (app) => app.get('/query', async () => await app.mongo.db?.collection('x').findOne({}))
  })
  await db.close()
  const res = await fastify.inject('/query')
  t.equal(res.statusCode, 503)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.match(res.json(), { status: 503, code: 'DATABASE_UNAVAILABLE' })
  t.notMatch(res.body, /ECONNREFUSED|127\.0\.0\.1|Mongo/)
})

t.test('a refusal of this replica (OVERLOADED) is logged as a rejected request, not a database fault', async (t) => {
  const logLines: Array<Record<string, unknown>> = []
  const fastify = await build(t, { logLines })
  fastify.lifecycle.stopAccepting()
  const res = await fastify.inject({ url: '/projects?limit=1', headers: { 'x-request-id': 'shed-1' } })
  t.match(res.json(), { status: 503, code: 'OVERLOADED' })
  const lines = logLines.filter((line) => line.requestId === 'shed-1' && line.code !== undefined)
  t.same(lines.map(({ level, msg, code, driverCode }) => ({ level, msg, code, driverCode })),
    [{ level: 30, msg: 'request rejected', code: 'OVERLOADED', driverCode: undefined }])
})
