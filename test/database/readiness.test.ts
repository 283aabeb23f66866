// What /ready reports comes from the readiness checks' pings (database/readiness.ts): a slow
// database that answers is ready, whatever each answer costs.
import { once } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { DatabaseReadiness } from '../../database/readiness.js'
import { start } from '../../offline-mongodb/server.js'
import { startFaultProxy } from '../faults/fault-proxy.js'
import { resolvesWithin, until } from '../helpers/until.js'

const quiet = () => {}
const log = {
  info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet, fatal: quiet, child: () => log
} as unknown as FastifyBaseLogger

t.test('a ping that opens its connection: the handshake is an answer, so silence counts from it', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  // Connections idle past 100 ms are closed at their next checkout: the next ping, 500 ms after
  // the last, opens one, and waits for its handshake before its own answer.
  const client = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 3000, maxIdleTimeMS: 100 })
  // Silence is measured on a clock the test moves; the ping's own limit is far off in real time.
  const clock = { time: 0 }
  const checks = new DatabaseReadiness({
    client, log, pingTimeoutMs: 60_000, silentAfterMs: 1000, now: () => clock.time
  })
  t.teardown(async () => { checks.stop(); await client.close(true) })
  checks.start()
  await checks.started()
  t.same(checks.readiness(), { ready: true }, 'ready')
  // The next ping: 800 ms pass before its connection's handshake is answered, and its own
  // answer is held.
  const reply = proxy.holdReply((command) => command.ping !== undefined)
  const opened = once(client, 'connectionCreated').then(() => { clock.time += 800 })
  t.ok(await resolvesWithin(opened, 10_000), 'the ping opens a connection')
  t.ok(await resolvesWithin(reply.held, 10_000), 'the ping is sent over it, and its answer held')
  t.same(checks.readiness(), { ready: true }, 'just after the handshake')
  clock.time += 999
  t.same(checks.readiness(), { ready: true },
    'longer than silentAfterMs since the ping was sent, but not since the handshake: not silent')
  clock.time += 2
  t.same(checks.readiness(), { ready: false, reason: 'the database has not answered a ping for 1000 ms' },
    'longer than silentAfterMs since the handshake: silent')
  reply.release()
  t.ok(await until(() => checks.readiness().ready, 10_000), 'ready again once the ping is answered')
})

t.test('stopped before its client closes: a ping cut short by the close is not taken for an outage', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  const client = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 3000 })
  const warnings: string[] = []
  const checks = new DatabaseReadiness({
    client,
    log: { ...log, warn: (message: string) => { warnings.push(message) } } as unknown as FastifyBaseLogger,
    pingTimeoutMs: 3000
  })
  checks.start()
  await checks.started()
  t.equal(checks.ready, true, 'ready')
  // The next ping's reply held: it waits as the close comes.
  const hold = proxy.holdReply((command) => command.ping !== undefined)
  t.teardown(hold.release)
  await hold.held
  const pinging = checks.ping() // joins the ping under way
  checks.stop()
  await client.close(true)
  t.equal(await pinging, false, 'the ping ended with the close')
  t.same(warnings, [], 'no warning that the database is gone')
})
