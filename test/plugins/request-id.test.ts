// docs/operations.md: X-Request-Id kept when valid, made otherwise; sent back, in every problem
// body, and in every log line of the request.
import t from 'tap'
import { build } from '../helpers/build.js'

const logLines: Array<Record<string, unknown>> = []
const fastify = await build(t, { logLines })
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

t.test('a valid incoming id is kept: header, problem body and log lines', async (t) => {
  const id = 'req:2024-06-01.abc_DEF-9'
  const ok = await fastify.inject({ url: '/projects', headers: { 'x-request-id': id } })
  t.equal(ok.statusCode, 200)
  t.equal(ok.headers['x-request-id'], id)
  const bad = await fastify.inject({ url: '/projects?limit=x', headers: { 'x-request-id': id } })
  t.equal(bad.headers['x-request-id'], id)
  t.equal(bad.json().requestId, id)
  const lines = logLines.filter((line) => line.requestId === id)
  t.ok(lines.some((line) => line.msg === 'request rejected'), 'the request\'s log line carries its id')
  t.notOk(logLines.some((line) => line.reqId !== undefined), 'the log field is requestId')
})

t.test('an invalid or missing id is replaced by a generated one', async (t) => {
  for (const id of [undefined, 'x'.repeat(129), 'has space', '<script>', 'ünïcode', '']) {
    const res = await fastify.inject({ url: '/nowhere', headers: id === undefined ? {} : { 'x-request-id': id } })
    const sent = res.headers['x-request-id'] as string
    t.match(sent, UUID, `${JSON.stringify(id)} → a generated id`)
    t.equal(res.json().requestId, sent, 'the same in the problem body')
  }
  t.equal((await fastify.inject({ url: '/health', headers: { 'x-request-id': 'x'.repeat(128) } }))
    .headers['x-request-id'], 'x'.repeat(128), '128 characters are kept')
})
