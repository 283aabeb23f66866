// docs/operations.md, tracing in the real process: with OTEL_EXPORTER_OTLP_ENDPOINT set, `server.ts`
// exports a request's spans over OTLP/HTTP to that address (a collector stand-in on loopback
// here), continuing the caller's trace; unset, not one OpenTelemetry module is even imported.
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { testDatabase, uniqueDatabaseName } from '../helpers/database.js'
import { freePort, startService, expectReady } from '../faults/service-process.js'
import { SHUTDOWN_FLUSH_MS } from '../../telemetry/tracing.js'

t.setTimeout(90_000)

/**
 * What an exit after SIGTERM may take here, besides the flush (docs/operations.md, "Drain on
 * SIGTERM"): SHUTDOWN_DELAY_MS is 0 and no request is in flight; the shared change streams close
 * in at most 1.5 s, the database client in at most 1.5 s.
 */
const STREAMS_CLOSE_MS = 1500
const DATABASE_CLOSE_MS = 1500
/**
 * The rest: the signal's delivery, Node's exit after the last log line, and a machine busy with
 * the suite's other files. The whole bound stays under the OTLP exporter's own 10 s timeout
 * (what the exit would wait without the flush bound), so that the assertion can fail for it.
 */
const EXIT_SLACK_MS = 1000
const EXIT_BOUND_MS = STREAMS_CLOSE_MS + DATABASE_CLOSE_MS + SHUTDOWN_FLUSH_MS + EXIT_SLACK_MS

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'
const RECORDER = ['--import', path.join(import.meta.dirname, '..', 'helpers', 'record-imports.mjs')]
const { uri } = await testDatabase()
const dir = await mkdtemp(path.join(tmpdir(), 'tracing-'))
t.teardown(async () => await rm(dir, { recursive: true, force: true }))

/** An OTLP/HTTP receiver: keeps every body posted to /v1/traces and answers as a collector does. */
async function collector (t: Test): Promise<{ endpoint: string, bodies: Buffer[] }> {
  const bodies: Buffer[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') bodies.push(Buffer.concat(chunks))
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => { server.close() })
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies }
}

async function importedModules (file: string): Promise<string[]> {
  return (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '')
}
const isTelemetry = (url: string): boolean => url.includes('/@opentelemetry/') || url.includes('/@fastify/otel/')

t.test('on: the spans of a request reach the OTLP endpoint, in the caller\'s trace', async (t) => {
  const { endpoint, bodies } = await collector(t)
  const imports = path.join(dir, 'on.txt')
  const service = await startService({
    MONGODB_URI: uri,
    MONGODB_DB: uniqueDatabaseName(),
    SHUTDOWN_DELAY_MS: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: '100',
    RECORD_IMPORTS_TO: imports
  }, RECORDER)
  t.teardown(() => { service.child.kill('SIGKILL') })
  t.ok(service.lines.some((line) => line.includes(`tracing on: spans exported over OTLP to ${endpoint}`)),
    'the start-up log says where spans go')
  // Lists answer once the database has answered the service's first ping (/ready).
  await expectReady(t, service.url)

  const res = await fetch(`${service.url}/projects?limit=1`,
    { headers: { traceparent: `00-${TRACE_ID}-b7ad6b7169203331-01` } })
  t.equal(res.status, 200)
  await res.arrayBuffer()
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0, 'exits 0, spans flushed on the way out')

  const sent = Buffer.concat(bodies)
  t.ok(sent.includes(Buffer.from(TRACE_ID, 'hex')), 'spans in the caller\'s trace were exported')
  for (const text of ['listing-api', '/projects', 'http.route', 'db.operation.name', 'find', 'mongodb']) {
    t.ok(sent.includes(text), `the export mentions ${text}`)
  }
  t.ok((await importedModules(imports)).some(isTelemetry),
    'control: the import recorder sees OpenTelemetry modules when tracing is on')
})

t.test('off: no OpenTelemetry module is imported', async (t) => {
  const imports = path.join(dir, 'off.txt')
  const service = await startService({
    MONGODB_URI: uri,
    MONGODB_DB: uniqueDatabaseName(),
    SHUTDOWN_DELAY_MS: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
    RECORD_IMPORTS_TO: imports
  }, RECORDER)
  t.teardown(() => { service.child.kill('SIGKILL') })
  await expectReady(t, service.url)
  t.equal((await fetch(`${service.url}/projects?limit=1`)).status, 200)
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
  const modules = await importedModules(imports)
  t.ok(modules.some((url) => url.includes('/node_modules/fastify/')), 'control: the recorder saw the service load')
  t.same(modules.filter(isTelemetry), [], 'nothing of OpenTelemetry loaded')
  t.notOk(service.lines.some((line) => line.includes('tracing on')))
})

t.test('an unreachable collector costs nothing: lists answer, ' +
  'and the exit waits at most the flush bound', async (t) => {
  const service = await startService({
    MONGODB_URI: uri,
    MONGODB_DB: uniqueDatabaseName(),
    SHUTDOWN_DELAY_MS: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  await expectReady(t, service.url)
  for (let i = 0; i < 3; i++) t.equal((await fetch(`${service.url}/projects?limit=1`)).status, 200)
  const stopped = Date.now()
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0)
  const took = Date.now() - stopped
  t.ok(took <= EXIT_BOUND_MS, `exited ${took} ms after SIGTERM (at most ${EXIT_BOUND_MS} ms: the flush bound ` +
    `${SHUTDOWN_FLUSH_MS} ms, the closing streams and database client, ${EXIT_SLACK_MS} ms of slack)`)
})
