// A database that goes silent (blackhole, half-open connections), one that answers slowly,
// and one that answers with the error documents mongod sends during failovers: every list
// answers within the bound, with the right problem, and the service serves again afterwards.
import type { Db } from 'mongodb'
import t from 'tap'
import { CLIENT_MARGIN_MS } from '../../plugins/mongodb.js'
import { build } from '../helpers/build.js'
import { until } from '../helpers/until.js'
import {
  ANSWER_BOUND_MS,
  HEARTBEAT_MS,
  QUERY_TIMEOUT_MS,
  RECOVERY_BOUND_MS,
  SLACK_MS,
  faultApp,
  justChecked,
  proxiedDatabase,
  recoveryTime,
  serverChecks,
  timed
} from './fault-app.js'

t.setTimeout(120_000)
const proxy = await proxiedDatabase(t)
const fastify = await faultApp(t, proxy)
const projectId = '665f1c2e9b1d4a3f5c7e8a90'
const urls = ['/projects?limit=5', `/projects/${projectId}/sessions?count=true`]

const checks = serverChecks(fastify)

t.test('a blackhole: 503 QUERY_TIMEOUT, then DATABASE_UNAVAILABLE once the driver gives the server up; ' +
  '/health stays 200, recovery after', async (t) => {
  for (const url of urls) {
    // An app of its own, warm (build() waits for it), whose driver trusts its connections.
    const proxy = await proxiedDatabase(t)
    const fastify = await faultApp(t, proxy)
    const checks = serverChecks(fastify)
    const replaced = fastify.database.replacement.count
    t.ok(await justChecked(checks), `${url}: the driver has just checked the server`)
    proxy.blackhole()
    const silentSince = Date.now()
    // Just gone silent: the driver still trusts the server, and the request's own limit ends it.
    const fresh = await timed(fastify, url)
    t.match(fresh, { status: 503, code: 'QUERY_TIMEOUT', retryAfter: '1' },
      `${url}: just gone silent, 503 ${fresh.code ?? ''}`)
    t.ok(fresh.ms <= ANSWER_BOUND_MS, `${url}: answered in ${fresh.ms} ms`)
    // Its check times out, or the watchdog replaces the client by one that never reaches the server.
    const givenUp = await until(() => checks.failedAt > silentSince || fastify.database.replacement.count > replaced,
      HEARTBEAT_MS + QUERY_TIMEOUT_MS + SLACK_MS)
    t.ok(givenUp, `${url}: the driver no longer trusts the server`)
    const known = await timed(fastify, url)
    t.match(known, { status: 503, code: 'DATABASE_UNAVAILABLE', retryAfter: '1' },
      `${url}: then no server to select, 503 ${known.code ?? ''}`)
    t.ok(known.ms <= ANSWER_BOUND_MS, `${url}: answered in ${known.ms} ms`)
    t.equal((await fastify.inject('/health')).statusCode, 200, '/health stays 200')
    t.equal((await fastify.inject('/ready')).statusCode, 503, '/ready is 503')
    proxy.heal()
    t.ok(await recoveryTime(fastify, urls[0] as string) <= RECOVERY_BOUND_MS, `${url}: serving again`)
  }
})

t.test('half-open connections (the peer vanished without a FIN): 503 QUERY_TIMEOUT within the bound, ' +
  'then recovered', async (t) => {
  t.equal((await timed(fastify, urls[0] as string)).status, 200)
  // The pooled connection the list is sent on never answers, and the driver cannot know that a new
  // one would: the query's time limit ends the request, a time limit's own problem (docs/errors.md).
  // The monitor notices no sooner when its last check has just succeeded: its next, on its own
  // silent connection, fails after heartbeatFrequencyMS plus connectTimeoutMS (plugins/mongodb.ts).
  t.ok(await justChecked(checks), 'the driver has just checked the server')
  proxy.halfOpen()
  const answer = await timed(fastify, urls[0] as string)
  t.equal(answer.status, 503, `${answer.status} ${answer.code ?? ''}`)
  t.equal(answer.code, 'QUERY_TIMEOUT')
  t.equal(answer.retryAfter, '1', 'with Retry-After')
  t.ok(answer.ms <= ANSWER_BOUND_MS, `answered in ${answer.ms} ms`)
  proxy.heal()
  t.ok(await recoveryTime(fastify, urls[0] as string) <= RECOVERY_BOUND_MS, 'serving again')
})

t.test('slow replies', async (t) => {
  proxy.slow(QUERY_TIMEOUT_MS * 3)
  for (const url of urls) {
    const answer = await timed(fastify, url)
    t.equal(answer.status, 503, `a reply slower than the query timeout: ${url} 503 ${answer.code ?? ''}`)
    t.ok(answer.ms <= ANSWER_BOUND_MS, `answered in ${answer.ms} ms`)
  }
  proxy.heal()
  t.ok(await recoveryTime(fastify, urls[0] as string) <= RECOVERY_BOUND_MS, 'serving again')
  // A reply within the timeout answers, a nested list's too: it reads its project (not remembered)
  // in its own command, one round trip. Each reply takes more than half the request's budget, so
  // a project check read before the list would overrun it (503); less than QUERY_TIMEOUT_MS, so the
  // driver's checks of the server (connectTimeoutMS) still pass.
  const budget = QUERY_TIMEOUT_MS + CLIENT_MARGIN_MS
  const delay = QUERY_TIMEOUT_MS * 0.8
  const db = fastify.mongo.db as Db
  const { insertedId: project } = await db.collection('projects').insertOne({ name: 'one round trip' })
  t.teardown(async () => { await db.collection('projects').deleteOne({ _id: project }) })
  proxy.slow(delay)
  const nested = await timed(fastify, `/projects/${String(project)}/sessions`)
  t.equal(nested.status, 200, `${delay} ms replies, two of which would overrun the ${budget} ms budget: ` +
    `${[nested.status, nested.code].join(' ').trim()} in ${nested.ms} ms, the project read with the list`)
  t.ok(nested.ms <= ANSWER_BOUND_MS, `answered in ${nested.ms} ms`)
  proxy.heal()
})

// The documents mongod sends (ok: 0, code, codeName, errmsg, errorLabels), injected for `find`.
const SERVER_ERRORS: Array<[number, string, string, string[]?]> = [
  [91, 'ShutdownInProgress', 'The server is in quiesce mode and will shut down'],
  [189, 'PrimarySteppedDown', 'Primary stepped down while waiting for replication', ['RetryableWriteError']],
  [10107, 'NotWritablePrimary', 'not primary'],
  [11600, 'InterruptedAtShutdown', 'interrupted at shutdown'],
  [11602, 'InterruptedDueToReplStateChange', 'operation was interrupted because a client disconnected'],
  [13435, 'NotPrimaryNoSecondaryOk', 'not master and slaveOk=false'],
  [13436, 'NotPrimaryOrSecondary', 'node is recovering'],
  [6, 'HostUnreachable', 'Connection refused'],
  [7, 'HostNotFound', 'No host found'],
  [89, 'NetworkTimeout', 'Socket operation timed out'],
  [9001, 'SocketException', 'socket exception'],
  [43, 'CursorNotFound', 'cursor id 7493024 not found'],
  [237, 'CursorKilled', 'cursor killed'],
  [262, 'ExceededTimeLimit', 'operation exceeded time limit'],
  [50, 'MaxTimeMSExpired', 'operation exceeded time limit']
]
const TIME_LIMITS = new Set([50, 262])

t.test('server error replies: state changes are 503 DATABASE_UNAVAILABLE, time limits 503 QUERY_TIMEOUT', async (t) => {
  for (const [code, codeName, errmsg, errorLabels] of SERVER_ERRORS) {
    proxy.failCommands(['find'], { code, codeName, errmsg, ...(errorLabels === undefined ? {} : { errorLabels }) })
    const res = await fastify.inject(urls[0] as string)
    t.equal(res.statusCode, 503, `${code} ${codeName}: 503`)
    t.match(res.json(), { code: TIME_LIMITS.has(code) ? 'QUERY_TIMEOUT' : 'DATABASE_UNAVAILABLE' },
      `${code} ${codeName}`)
    t.equal(res.headers['retry-after'], '1')
    t.notMatch(res.body, new RegExp(errmsg), 'no driver message in the body')
    proxy.heal()
    t.ok(await recoveryTime(fastify, urls[0] as string) <= RECOVERY_BOUND_MS, `${codeName}: serving again`)
  }
})

t.test('a failover error is retried once, as the driver retries a find (retryable reads); ' +
  'a time limit is not', async (t) => {
  for (const [code, codeName, errmsg] of SERVER_ERRORS.filter(([code]) => !TIME_LIMITS.has(code))) {
    proxy.failCommands(['find'], { code, codeName, errmsg }, 1)
    t.equal((await fastify.inject(urls[0] as string)).statusCode, 200, `one ${code} ${codeName}: answered by the retry`)
  }
  proxy.failCommands(['find'], { code: 189, codeName: 'PrimarySteppedDown', errmsg: 'Primary stepped down' }, 2)
  t.equal((await fastify.inject(urls[0] as string)).statusCode, 503, 'two in a row: 503, no third try')
  proxy.failCommands(['find'], { code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit' }, 1)
  const limited = await fastify.inject(urls[0] as string)
  t.equal(limited.statusCode, 503)
  t.match(limited.json(), { code: 'QUERY_TIMEOUT' }, 'a query over its time is not sent again')
  proxy.heal()
})

t.test('a refusal caused by the query is a 400; an unknown server error a 503 without its message', async (t) => {
  proxy.failCommands(['find'], {
    code: 51091, codeName: 'Location51091', errmsg: 'Regular expression is invalid: missing )'
  })
  const refused = await fastify.inject(urls[0] as string)
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { code: 'INVALID_REGEX' })
  proxy.failCommands(['find'], { code: 12345, codeName: 'SomethingNew', errmsg: 'secret internals' })
  const unknown = await fastify.inject(urls[0] as string)
  t.equal(unknown.statusCode, 503, 'a database fault, never a 500')
  t.match(unknown.json(), { code: 'DATABASE_UNAVAILABLE' })
  t.equal(unknown.headers['retry-after'], '1')
  t.notMatch(unknown.body, /secret internals/)
  proxy.heal()
})

t.test('a page larger than one batch whose cursor is lost between batches (CursorNotFound) ' +
  'is read again from the start, once', async (t) => {
  const { ObjectId } = await import('mongodb')
  // 18 MiB through the proxy can take longer than the fault app's one-second query limit while
  // the rest of the suite runs: the subject here is the lost cursor, so the app has ten.
  const fastify = await build(t, { databaseUri: proxy.uri, config: { QUERY_TIMEOUT_MS: 10_000 } })
  const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
  // 18 documents of 1 MiB: more than the 16 MiB of a first batch, so the page needs a getMore.
  const ids = Array.from({ length: 18 }, () => new ObjectId())
  await db.collection('projects').insertMany(ids.map((_id, i) => ({ _id, name: `${i}`.padEnd(1 << 20, 'x') })))
  t.teardown(async () => { await db.collection('projects').deleteMany({ _id: { $in: ids } }) })
  const url = '/projects?fields=name&limit=18'
  const whole = await fastify.inject(url)
  t.equal(whole.statusCode, 200, 'the page is read whole')
  t.equal(whole.json().data.length, 18)
  const lost = { code: 43, codeName: 'CursorNotFound', errmsg: 'cursor id 7493024 not found' }
  proxy.failCommands(['getMore'], lost, 1)
  const again = await fastify.inject(url)
  t.equal(again.statusCode, 200, 'one lost cursor: the page is read again')
  t.same(again.json().data.map((d: { _id: string }) => d._id),
    whole.json().data.map((d: { _id: string }) => d._id), 'the same documents, in order')
  proxy.failCommands(['getMore'], lost, 2)
  const twice = await fastify.inject(url)
  t.equal(twice.statusCode, 503, 'lost twice: 503')
  t.match(twice.json(), { code: 'DATABASE_UNAVAILABLE' })
  t.equal(twice.headers['retry-after'], '1')
  t.notMatch(twice.body, /7493024/, 'no driver message in the body')
  proxy.heal()
})
