// A client that does not recover while its database accepts connections is replaced; one whose
// database is unreachable is left alone (nothing a new client could fix).
import type { FastifyBaseLogger } from 'fastify'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { ClientReplacement } from '../../database/client-replacement.js'
import { DatabaseReadiness } from '../../database/readiness.js'
import { start } from '../../offline-mongodb/server.js'
import { startFaultProxy } from '../faults/fault-proxy.js'
import { freePort } from '../faults/service-process.js'
import { until } from '../helpers/until.js'

const quiet = () => {}
const log = {
  info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet, fatal: quiet, child: () => log
} as unknown as FastifyBaseLogger
const STUCK_AFTER_MS = 800

/**
 * Readiness checks and a client replacement on `uri`, noting
 * when it replaces its client and how often it chose to keep it.
 */
type DriverTimes = Partial<Record<'connectTimeoutMS' | 'heartbeatFrequencyMS' | 'serverSelectionTimeoutMS', number>>

function watch (uri: string, driver: DriverTimes = {}) {
  const options = { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500, ...driver }
  const replacedAt: number[] = []
  let kept = 0
  let slow = 0
  const client = new MongoClient(uri, options)
  const checks = new DatabaseReadiness({ client, log, pingTimeoutMs: 1000 })
  const replacement = new ClientReplacement({
    client,
    readiness: checks,
    log: {
      ...log,
      debug: (message: string) => {
        if (/no member of the database accepts connections: kept/.test(message)) kept++
        if (/heartbeats are answered: kept/.test(message)) slow++
      }
    } as unknown as FastifyBaseLogger,
    stuckAfterMs: STUCK_AFTER_MS,
    connectTimeoutMs: 1000,
    createClient: () => new MongoClient(uri, options),
    onReplace: (next) => { replacedAt.push(Date.now()); current = next },
    retireAfterMs: 100
  })
  let current = client
  const stop = async (): Promise<void> => {
    checks.stop()
    await Promise.all([replacement.stop(), current.close(true)])
  }
  return { checks, replacedAt, kept: () => kept, slowKept: () => slow, stop }
}

t.test('a database that accepts connections but never answers: the client is replaced', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  proxy.blackhole()
  const { checks, replacedAt, stop } = watch(proxy.uri)
  t.teardown(stop)
  checks.start()
  await checks.started()
  t.equal(checks.ready, false)
  t.ok(await until(() => replacedAt.length >= 2, 6000), 'replaced, and replaced again while it stays stuck')
  const [first = 0, second = 0] = replacedAt
  t.ok(second - first >= STUCK_AFTER_MS, `at most once per stuck period: ${second - first} ms between replacements`)
  proxy.heal()
  t.ok(await until(() => checks.ready, 5000), 'ready once the database answers')
})

t.test('an unreachable database: no replacement, and ready when it comes', async (t) => {
  const port = await freePort()
  const { checks, replacedAt, kept, stop } = watch(`mongodb://127.0.0.1:${port}/?directConnection=true`)
  t.teardown(stop)
  checks.start()
  await checks.started()
  t.ok(await until(() => kept() >= 2, 6000), 'stuck, judged twice')
  t.equal(replacedAt.length, 0, 'nothing to gain from a new client')
  const database = await start({ port })
  t.teardown(database.close)
  t.ok(await until(() => checks.ready, 6000), 'ready')
})

t.test('a replica set whose first seed member is gone: ' +
  'judged by every member the driver knows, and replaced', async (t) => {
  const gone = await freePort()
  // The second member accepts connections and never answers (a stuck process); the third is gone too.
  const database = await start()
  t.teardown(database.close)
  const stuck = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(stuck.close)
  stuck.blackhole()
  const alsoGone = await freePort()
  const uri = `mongodb://127.0.0.1:${gone},127.0.0.1:${stuck.port},127.0.0.1:${alsoGone}/?replicaSet=rs0`
  const { checks, replacedAt, stop } = watch(uri)
  t.teardown(stop)
  checks.start()
  await checks.started()
  t.same(checks.knownHosts().sort(), [`127.0.0.1:${gone}`, `127.0.0.1:${stuck.port}`, `127.0.0.1:${alsoGone}`].sort(),
    'the three members')
  t.ok(await until(() => replacedAt.length >= 1, 5000), 'replaced: a member accepts connections')
  t.equal(checks.readiness().ready, false, 'not ready')
})

t.test('a replica set with every member gone: no replacement', async (t) => {
  const ports = [await freePort(), await freePort(), await freePort()]
  const { checks, replacedAt, kept, stop } =
    watch(`mongodb://${ports.map((port) => `127.0.0.1:${port}`).join(',')}/?replicaSet=rs0`)
  t.teardown(stop)
  checks.start()
  await checks.started()
  t.ok(await until(() => kept() >= 2, 6000), 'stuck, judged twice')
  t.equal(replacedAt.length, 0, 'nothing to gain from a new client')
})

t.test('a database slower than the pings but answering heartbeats: the client is kept, and recovers', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  // Every reply 1.3 s late: a ping (1 s) fails, a heartbeat (3 s) is answered. A client replaced
  // every stuck period would never finish its handshakes on such a database after an outage.
  proxy.slow(1300)
  const { checks, replacedAt, slowKept, stop } =
    watch(proxy.uri, { connectTimeoutMS: 3000, heartbeatFrequencyMS: 500, serverSelectionTimeoutMS: 3000 })
  t.teardown(stop)
  checks.start()
  await checks.started()
  t.ok(await until(() => slowKept() >= 2, 10_000), 'judged twice, and kept: its heartbeats are answered')
  t.equal(replacedAt.length, 0, 'never replaced')
  proxy.heal()
  t.ok(await until(() => checks.ready, 5000), 'ready once the database is fast again')
})
