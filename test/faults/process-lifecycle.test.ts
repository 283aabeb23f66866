// The service as a process: it starts before its database (the normal order when a cluster
// starts) and becomes ready when the database answers; on SIGTERM it drains and exits 0, its
// long polls and streams ended at once.
import { spawn } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { start } from '../../offline-mongodb/server.js'
import { INDEXES } from '../../plugins/indexes.js'
import { shutdownBoundMs } from '../../process/service.js'
import { prepareFeeds } from '../helpers/feeds.js'
import { startFaultProxy } from './fault-proxy.js'
import { freePort, get, startService, expectReady } from './service-process.js'
import { RECOVERY_BOUND_MS, SLACK_MS } from './fault-app.js'
import { NODE, nodeArgs } from '../helpers/node-child.js'
import { timeUntil, until } from '../helpers/until.js'

t.setTimeout(120_000)

t.test('listens before its database answers: /health 200 and /ready 503 "starting" while ' +
  'the first ping still waits', async (t) => {
  const port = await freePort()
  // The default query budget: the first ping may wait 2 x (5 s + 0.5 s) for a database that is not there.
  const service = await startService({
    MONGODB_URI: `mongodb://127.0.0.1:${port}/?directConnection=true`, SHUTDOWN_DELAY_MS: '0'
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  t.equal((await get(`${service.url}/health`)).status, 200, '/health answers')
  const ready = await get(`${service.url}/ready`)
  t.equal(ready.status, 503, '/ready is 503')
  t.match(ready.body, { code: 'DATABASE_UNAVAILABLE', detail: /starting/ },
    'and says it is starting: it listened before the first ping ended')
  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0, 'and stops cleanly meanwhile')
})

t.test('starts before its database: /health 200, /ready and lists 503, then ready once it answers', async (t) => {
  const port = await freePort()
  const service = await startService({
    MONGODB_URI: `mongodb://127.0.0.1:${port}/?directConnection=true`, QUERY_TIMEOUT_MS: '1000', SHUTDOWN_DELAY_MS: '0'
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  t.equal((await get(`${service.url}/health`)).status, 200, '/health answers at once')
  t.equal((await get(`${service.url}/ready`)).status, 503, '/ready is 503')
  const list = await get(`${service.url}/projects`)
  t.equal(list.status, 503)
  t.match(list.body, { code: 'DATABASE_UNAVAILABLE' })
  await timeUntil(async () => service.lines.some((line) => line.includes('waiting for the database')), 3000, 200)
  t.equal(service.lines.filter((line) => line.includes('waiting for the database')).length, 1,
    'one line says what it waits for')
  t.notOk(service.lines.some((line) => /\bat .+:\d+:\d+/.test(line) || line.includes('"stack"')), 'no stack trace')

  const database = await start({ port })
  t.teardown(database.close)
  const readyAfter = await timeUntil(async () => (await get(`${service.url}/ready`)).status === 200,
    RECOVERY_BOUND_MS, 200)
  t.ok(readyAfter <= RECOVERY_BOUND_MS, `ready ${readyAfter} ms after the database came up`)
  t.equal((await get(`${service.url}/projects`)).status, 200, 'lists answer')
  t.ok(service.lines.some((line) => line.includes('database connected')), 'one line says it connected')

  const client = new MongoClient(database.uri)
  t.teardown(async () => await client.close())
  const indexesCreated = await timeUntil(async () => {
    const names = await client.db('listing').collection('sessions').listIndexes().toArray().catch(() => [])
    return names.length === (INDEXES.sessions?.length ?? 0) + 1
  }, 5000, 200)
  t.ok(indexesCreated < Infinity, 'start-up indexes were created once the database answered')

  service.child.kill('SIGTERM')
  t.equal(await service.exited, 0, 'exits 0 on SIGTERM')
})

/** docs/operations.md: at shutdown the shared change streams close within 1.5 s, then the client within 1.5 s. */
const STREAMS_CLOSE_MS = 1500
const CLIENT_CLOSE_MS = 1500
/** How often the drain test asks /ready after SIGTERM. */
const ASK_EVERY_MS = 200

t.test('SIGTERM under load: not ready at once, still serving during the delay, then exit 0', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const shutdownDelayMs = 1500
  const queryTimeoutMs = 1000
  const service = await startService({
    MONGODB_URI: database.uri, SHUTDOWN_DELAY_MS: String(shutdownDelayMs), QUERY_TIMEOUT_MS: String(queryTimeoutMs)
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  await expectReady(t, service.url)

  const statuses: number[] = []
  const problems: string[] = []
  const loading = { on: true }
  const load = (async () => {
    for (let i = 0; i < 2000 && loading.on; i++) {
      try {
        const res = await get(`${service.url}/projects?limit=1`)
        statuses.push(res.status)
        // Refused only as a replica shutting down refuses: a problem a client knows to retry elsewhere.
        const code = res.body?.code as string | undefined
        if (res.status !== 200 &&
          !(res.status === 503 && code === 'OVERLOADED' && res.type.startsWith('application/problem+json'))) {
          problems.push(`${res.status} ${res.type} ${code ?? ''}`)
        }
      } catch {
        break // the listener is closed: connections are refused from here on
      }
    }
  })()
  t.ok(await until(() => statuses.length >= 10, 5000), 'the load is being answered')
  const signalled = Date.now()
  const linesBefore = service.lines.length
  service.child.kill('SIGTERM')
  // At once (docs/operations.md): by the next question, within scheduling noise. This must stay
  // below shutdownDelayMs, whose end closes the listener (a /ready still 200 then fails the test too).
  const notReadyBound = ASK_EVERY_MS + SLACK_MS
  const notReady = await timeUntil(async () => (await get(`${service.url}/ready`)).status === 503,
    notReadyBound, ASK_EVERY_MS)
  t.ok(notReady <= notReadyBound, `/ready is 503 ${notReady} ms after SIGTERM (bound ${notReadyBound} ms)`)
  const during = await get(`${service.url}/projects?limit=1`)
  t.equal(during.status, 200, 'lists are still served during SHUTDOWN_DELAY_MS')
  const code = await service.exited
  const exitedAfter = Date.now() - signalled
  loading.on = false
  await load
  t.equal(code, 0, 'exit code 0')
  // The documented bound, and scheduling noise for the parent to see the exit.
  const exitBound = shutdownBoundMs({ SHUTDOWN_DELAY_MS: shutdownDelayMs, QUERY_TIMEOUT_MS: queryTimeoutMs }) + SLACK_MS
  t.ok(exitedAfter <= exitBound, `exited ${exitedAfter} ms after SIGTERM (bound ${exitBound} ms)`)
  const afterSignal = service.lines.slice(linesBefore)
  t.notOk(afterSignal.some((line) => /waiting for the database|MongoTopologyClosedError/.test(line)),
    'a clean shutdown does not warn that the database is gone')
  t.ok(statuses.filter((s) => s === 200).length > 10, `${statuses.length} requests answered under load`)
  t.same(problems, [], 'every refusal was a problem+json 503 OVERLOADED')
})

t.test('SIGTERM while a request waits on a silent database: it gets its 503, and the exit is 0', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  // debug: a line per request, so that the test knows the stuck one has arrived.
  const service = await startService({
    MONGODB_URI: proxy.uri, SHUTDOWN_DELAY_MS: '0', QUERY_TIMEOUT_MS: '1000', LOG_LEVEL: 'debug'
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  await expectReady(t, service.url)
  t.equal((await get(`${service.url}/projects`)).status, 200)
  proxy.blackhole()
  const stuck = get(`${service.url}/projects`)
  const arrivals = () => service.lines.filter((line) => line.includes('incoming request') &&
    line.includes('"url":"/projects"')).length
  t.ok(await until(() => arrivals() === 2, 5000), 'the request is being answered')
  service.child.kill('SIGTERM')
  const answer = await stuck
  t.equal(answer.status, 503, 'the waiting request is answered')
  t.match(answer.type, /^application\/problem\+json/)
  t.equal(await service.exited, 0, 'exit code 0')
})

t.test('SIGTERM with a long poll and a stream open, the database stopping too (Ctrl-C): ' +
  'both end at once, exit 0 within the drain', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const client = new MongoClient(database.uri)
  t.teardown(async () => await client.close())
  await prepareFeeds(client.db('listing'))
  const { insertedId: project } = await client.db('listing').collection('projects').insertOne({ name: 'P' })
  const delayMs = 1000
  const queryTimeoutMs = 10_000
  // The delay, then the streams and the client closed (their documented bounds) and scheduling noise.
  // This must stay below delayMs + queryTimeoutMs: a read of the stopped database, or a wait for it, adds the latter.
  const exitBound = delayMs + STREAMS_CLOSE_MS + CLIENT_CLOSE_MS + SLACK_MS
  // debug: a line per request, so that the test knows both have arrived.
  // Metrics on: they say when both requests sleep between reads.
  const service = await startService({
    MONGODB_URI: database.uri,
    SHUTDOWN_DELAY_MS: String(delayMs),
    QUERY_TIMEOUT_MS: String(queryTimeoutMs),
    LOG_LEVEL: 'debug',
    METRICS_PORT: String(await freePort())
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  await expectReady(t, service.url)
  const feed = `${service.url}/projects/${project.toHexString()}/registrations/changes`
  const { next } = await (await fetch(feed)).json() as { next: string }
  const poll = fetch(`${feed}?wait=60&since=${next}`).then(async (res) => ({
    status: res.status, body: await res.json() as { events: unknown[], next?: string }
  }))
  let begun = false
  const stream = fetch(`${feed}?since=${next}`, { headers: { accept: 'application/x-ndjson' } }).then(async (res) => {
    let text = ''
    const decoder = new TextDecoder()
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true })
      if (text.includes('\n')) begun = true
    }
    return text.split('\n').filter((line) => line !== '')
  })
  const arrived = await timeUntil(async () => service.lines.filter((line) => line.includes('incoming request') &&
    line.includes(`since=${next}`)).length === 2, 5000, 50)
  t.ok(arrived < Infinity, 'both requests are being answered')
  t.ok(await until(() => begun, 5000), 'the stream has begun: its first checkpoint arrived')
  // Both asleep between reads: a first read still under way would wait for the stopped database
  // up to the query timeout.
  const metrics = /metrics at (http:\/\/[^\s"]+)/.exec(service.lines.join('\n'))?.[1]
  t.ok(metrics, 'the metrics address is logged')
  const idle = async (): Promise<number | undefined> => {
    const text = await (await fetch(metrics as string)).text()
    const value = /^changes_requests_idle (\d+)$/m.exec(text)?.[1]
    return value === undefined ? undefined : Number(value)
  }
  t.ok(await until(async () => await idle() === 2, 5000), 'the long poll and the stream sleep until a change')

  // Ctrl-C signals the whole process group: the embedded database stops with the service.
  const signalled = Date.now()
  service.child.kill('SIGTERM')
  await database.close()
  const code = await service.exited
  const exitedAfter = Date.now() - signalled
  t.equal(code, 0, 'exit code 0')
  t.ok(exitedAfter <= exitBound, `exited ${exitedAfter} ms after SIGTERM (bound ${exitBound} ms): the delay ` +
    'and the streams\' close, not the query timeout on a stopped database')
  const polled = await poll
  t.equal(polled.status, 200, 'the long poll answers 200')
  t.same(polled.body.events, [], 'with what it has')
  t.type(polled.body.next, 'string', 'and a token to go on from elsewhere')
  const lines = (await stream).map((line) => JSON.parse(line) as Record<string, unknown>)
  t.match(lines.at(-1), { next: String, synced: true }, 'the stream ends with a checkpoint')
  t.notOk(lines.some((line) => 'problem' in line), 'not a problem')
  t.notOk(service.lines.some((line) => /\bat .+:\d+:\d+|"stack"|killed by timeout/.test(line)),
    'no stack trace, no kill')
})

t.test('a busy port stops start-up with one line naming its variable, exit code 1', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const busy = net.createServer()
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { busy.close() })
  const port = String((busy.address() as net.AddressInfo).port)
  for (const variable of ['PORT', 'METRICS_PORT']) {
    const child = spawn(NODE, nodeArgs(['--import', 'tsx', 'server.ts']), {
      cwd: path.join(import.meta.dirname, '..', '..'),
      env: {
        ...process.env,
        FASTIFY_AUTOLOAD_TYPESCRIPT: '1',
        MONGODB_URI: database.uri,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        PORT: '0',
        METRICS_PORT: '0',
        CURSOR_KEY_FILE: 'off',
        [variable]: port
      },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    t.equal(code, 1, `${variable}: exit code 1`)
    const lines = stderr.trim().split('\n')
    t.equal(lines.length, 1, `${variable}: one line (${stderr.trim()})`)
    t.match(lines[0], new RegExp(`^Invalid configuration: ${variable}=${port} is already in use`),
      `${variable}: it names the variable`)
    t.notMatch(stderr, /\bat .+:\d+:\d+|EADDRINUSE/, `${variable}: no stack trace, no errno`)
  }
})
