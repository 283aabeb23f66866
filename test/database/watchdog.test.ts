// The watchdog replaces a client that does not recover while its database accepts connections,
// and leaves it alone while the database is unreachable (nothing a new client could fix).
import type { FastifyBaseLogger } from 'fastify'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { DatabaseWatchdog } from '../../database/watchdog.js'
import { start } from '../../offline-mongodb/server.js'
import { startFaultProxy } from '../faults/fault-proxy.js'
import { freePort } from '../faults/service-process.js'
import { until } from '../helpers/until.js'

const quiet = () => {}
const log = { info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet, fatal: quiet, child: () => log } as unknown as FastifyBaseLogger
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))
const STUCK_AFTER_MS = 800

/** A watchdog on `uri` that notes when it replaces its client, and how often it chose to keep it. */
function watch (uri: string) {
  const options = { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500 }
  const replacedAt: number[] = []
  let kept = 0
  const watchdog = new DatabaseWatchdog({
    client: new MongoClient(uri, options),
    log: { ...log, debug: (message: string) => { if (/no member of the database accepts connections: kept/.test(message)) kept++ } } as unknown as FastifyBaseLogger,
    stuckAfterMs: STUCK_AFTER_MS,
    pingTimeoutMs: 1000,
    createClient: () => new MongoClient(uri, options),
    onReplace: () => { replacedAt.push(Date.now()) },
    retireAfterMs: 100
  })
  return { watchdog, replacedAt, kept: () => kept }
}

t.test('a database that accepts connections but never answers: the client is replaced', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  proxy.blackhole()
  const { watchdog, replacedAt } = watch(proxy.uri)
  t.teardown(async () => await watchdog.stop())
  watchdog.start()
  await watchdog.started()
  t.equal(watchdog.ready, false)
  t.ok(await until(() => replacedAt.length >= 2, 6000), 'replaced, and replaced again while it stays stuck')
  const [first = 0, second = 0] = replacedAt
  t.ok(second - first >= STUCK_AFTER_MS, `at most once per stuck period: ${second - first} ms between replacements`)
  proxy.heal()
  t.ok(await until(() => watchdog.ready, 5000), 'ready once the database answers')
})

t.test('an unreachable database: no replacement, and ready when it comes', async (t) => {
  const port = await freePort()
  const { watchdog, replacedAt, kept } = watch(`mongodb://127.0.0.1:${port}/?directConnection=true`)
  t.teardown(async () => await watchdog.stop())
  let connected = 0
  watchdog.whenConnected(async () => { connected++ })
  watchdog.start()
  await watchdog.started()
  t.ok(await until(() => kept() >= 2, 6000), 'stuck, judged twice')
  t.equal(replacedAt.length, 0, 'nothing to gain from a new client')
  t.equal(connected, 0)
  const database = await start({ port })
  t.teardown(database.close)
  t.ok(await until(() => watchdog.ready && connected > 0, 6000), 'ready')
  t.equal(connected, 1, 'start-up work ran once, on first connect')
})

t.test('a replica set whose first seed member is gone: judged by every member the driver knows, and replaced', async (t) => {
  const gone = await freePort()
  // The second member accepts connections and never answers (a stuck process); the third is gone too.
  const database = await start()
  t.teardown(database.close)
  const stuck = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(stuck.close)
  stuck.blackhole()
  const alsoGone = await freePort()
  const uri = `mongodb://127.0.0.1:${gone},127.0.0.1:${stuck.port},127.0.0.1:${alsoGone}/?replicaSet=rs0`
  const { watchdog, replacedAt } = watch(uri)
  t.teardown(async () => await watchdog.stop())
  watchdog.start()
  await watchdog.started()
  t.same(watchdog.knownHosts().sort(), [`127.0.0.1:${gone}`, `127.0.0.1:${stuck.port}`, `127.0.0.1:${alsoGone}`].sort(), 'the three members')
  t.ok(await until(() => replacedAt.length >= 1, 5000), 'replaced: a member accepts connections')
  t.equal(watchdog.readiness().ready, false, 'not ready')
})

t.test('a replica set with every member gone: no replacement', async (t) => {
  const ports = [await freePort(), await freePort(), await freePort()]
  const { watchdog, replacedAt, kept } = watch(`mongodb://${ports.map((port) => `127.0.0.1:${port}`).join(',')}/?replicaSet=rs0`)
  t.teardown(async () => await watchdog.stop())
  watchdog.start()
  await watchdog.started()
  t.ok(await until(() => kept() >= 2, 6000), 'stuck, judged twice')
  t.equal(replacedAt.length, 0, 'nothing to gain from a new client')
})

t.test('a slow database where each ping opens its connection: the handshake is an answer, so never silent', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  // Connections idle past 100 ms are closed at their next checkout: every ping (500 ms apart) opens
  // one, and waits for two slow answers, its connection's handshake and its own.
  const options = { serverSelectionTimeoutMS: 3000, connectTimeoutMS: 3000, maxIdleTimeMS: 100 }
  const client = new MongoClient(proxy.uri, options)
  const watchdog = new DatabaseWatchdog({ client, log, stuckAfterMs: 10_000, pingTimeoutMs: 3000, silentAfterMs: 1000, createClient: () => new MongoClient(proxy.uri, options), onReplace: () => {} })
  t.teardown(async () => await watchdog.stop())
  watchdog.start()
  await watchdog.started()
  t.equal(watchdog.readiness().ready, true, 'ready')
  let created = 0
  client.on('connectionCreated', () => { created++ })
  proxy.slow(600)
  const reasons = new Set<string>()
  for (const end = Date.now() + 4000; Date.now() < end; await sleep(25)) {
    const readiness = watchdog.readiness()
    if (!readiness.ready) reasons.add(readiness.reason)
  }
  t.ok(created >= 2, `${created} connections opened by the pings`)
  t.same([...reasons], [], 'ready throughout: each ping takes two 600 ms answers, and the first of them comes well within 1000 ms')
})
