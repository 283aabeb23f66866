// docs/operations.md, tracing: with OpenTelemetry on, one list request gives a server span with its
// route template and status, continuing the caller's `traceparent`, and a child span for the
// MongoDB `find`. Spans go to an in-memory exporter; tracing starts before anything imports
// `mongodb`, as in server.ts, so every import of the app below is dynamic.
import t from 'tap'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { redactedStatement, startTracing } from '../../telemetry/tracing.js'

const exporter = new InMemorySpanExporter()
const tracing = startTracing(exporter)
t.teardown(tracing.shutdown)

const { buildWithDemoData, projectIds } = await import('../helpers/demo-app.js')
const fastify = await buildWithDemoData(t)
const { publicIds } = await projectIds(fastify)
const project = publicIds[0] as string

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_ID = '00f067aa0ba902b7'

function descendsFrom (span: ReadableSpan, ancestor: ReadableSpan, spans: ReadableSpan[]): boolean {
  for (let parent = span.parentSpanContext?.spanId; parent !== undefined;) {
    if (parent === ancestor.spanContext().spanId) return true
    parent = spans.find((s) => s.spanContext().spanId === parent)?.parentSpanContext?.spanId
  }
  return false
}

t.test('a list of a project not remembered: one aggregate on projects (the page looked up beside it), ' +
  'redacted', async (t) => {
  exporter.reset()
  const cold = publicIds[1] as string
  t.equal((await fastify.inject(`/projects/${cold}/activities?limit=2&filter={"name":{"$regex":"b"}}`)).statusCode, 200)
  const commands = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT)
  t.same(commands.map((s) => s.name), ['aggregate projects'], 'one command')
  t.notMatch(JSON.stringify(commands[0]?.attributes), /"b"/, 'no filter value in the span')
})

t.test('a list request: server span with route and status, continuing traceparent, and a child find', async (t) => {
  // The project is remembered from here on: the page is one find.
  await fastify.inject(`/projects/${project}/sessions?limit=1`)
  exporter.reset()
  const res = await fastify.inject({
    url: `/projects/${project}/sessions?limit=2&filter={"name":{"$regex":"a"}}`,
    headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` }
  })
  t.equal(res.statusCode, 200)
  const spans = exporter.getFinishedSpans()
  const server = spans.filter((s) => s.kind === SpanKind.SERVER)
  t.equal(server.length, 1, 'one server span')
  const [request] = server as [ReadableSpan]
  t.equal(request.attributes['http.route'], '/projects/:projectId/sessions', 'the route template, not the URL')
  t.equal(request.attributes['http.request.method'], 'GET')
  t.equal(request.attributes['http.response.status_code'], 200)
  t.equal(request.spanContext().traceId, TRACE_ID, 'the caller\'s trace continues')
  t.equal(request.parentSpanContext?.spanId, PARENT_ID, 'under the caller\'s span')

  const finds = spans.filter((s) => s.kind === SpanKind.CLIENT && s.attributes['db.operation.name'] === 'find')
  t.ok(finds.some((s) => s.attributes['db.collection.name'] === 'sessions' && s.name === 'find sessions'),
    'a MongoDB find on sessions')
  t.same(spans.filter((s) => s.attributes['db.collection.name'] === '$cmd').map((s) => s.name), [],
    'every command span names its collection, not the $cmd namespace')
  for (const find of finds) {
    t.equal(find.spanContext().traceId, TRACE_ID)
    t.ok(descendsFrom(find, request, spans), `${find.name} is a child of the request span`)
    t.equal(find.attributes['db.system.name'] ?? find.attributes['db.system'], 'mongodb')
    t.notMatch(JSON.stringify(find.attributes), /"a"/, 'no filter value in the span (statements are redacted)')
  }
})

t.test('a refused request: status on the span, no database span', async (t) => {
  exporter.reset()
  const res = await fastify.inject(`/projects/${project}/sessions?limit=x`)
  t.equal(res.statusCode, 400)
  const spans = exporter.getFinishedSpans()
  const [request] = spans.filter((s) => s.kind === SpanKind.SERVER) as [ReadableSpan]
  t.equal(request.attributes['http.response.status_code'], 400)
  t.not(request.status.code, SpanStatusCode.ERROR, 'a client error is not a server error')
  t.same(spans.filter((s) => s.kind === SpanKind.CLIENT), [], 'nothing ran on the database')
})

t.test('probes are not traced', async (t) => {
  exporter.reset()
  t.equal((await fastify.inject('/health')).statusCode, 200)
  t.same(exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER), [])
})

t.test('statements: every value redacted but the collection a command names', async (t) => {
  t.equal(redactedStatement({ find: 'sessions', filter: { email: 'ann@example.org', n: 3 }, limit: 3 }),
    '{"find":"sessions","filter":{"email":"?","n":"?"},"limit":"?"}')
  t.equal(redactedStatement({ _id: 'secret', email: 'ann@example.org' }), '{"_id":"?","email":"?"}',
    'a document handed over (insert) keeps nothing')
  t.equal(redactedStatement({ ping: 1 }), '{"ping":"?"}')
})
