// What /ready reports comes from the readiness checks' pings (database/readiness.ts): a slow
// database that answers is ready, whatever each answer costs.
import type { FastifyBaseLogger } from 'fastify'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { DatabaseReadiness } from '../../database/readiness.js'
import { start } from '../../offline-mongodb/server.js'
import { startFaultProxy } from '../faults/fault-proxy.js'

const quiet = () => {}
const log = { info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet, fatal: quiet, child: () => log } as unknown as FastifyBaseLogger
const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

t.test('a slow database where each ping opens its connection: the handshake is an answer, so never silent', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  // Connections idle past 100 ms are closed at their next checkout: every ping (500 ms apart) opens
  // one, and waits for two slow answers, its connection's handshake and its own.
  const options = { serverSelectionTimeoutMS: 3000, connectTimeoutMS: 3000, maxIdleTimeMS: 100 }
  const client = new MongoClient(proxy.uri, options)
  const checks = new DatabaseReadiness({ client, log, pingTimeoutMs: 3000, silentAfterMs: 1000 })
  t.teardown(async () => { checks.stop(); await client.close(true) })
  checks.start()
  await checks.started()
  t.equal(checks.readiness().ready, true, 'ready')
  let created = 0
  client.on('connectionCreated', () => { created++ })
  proxy.slow(600)
  const reasons = new Set<string>()
  for (const end = Date.now() + 4000; Date.now() < end; await sleep(25)) {
    const readiness = checks.readiness()
    if (!readiness.ready) reasons.add(readiness.reason)
  }
  t.ok(created >= 2, `${created} connections opened by the pings`)
  t.same([...reasons], [], 'ready throughout: each ping takes two 600 ms answers, and the first of them comes well within 1000 ms')
})

t.test('stopped before its client closes: a ping cut short by the close is not taken for an outage', async (t) => {
  const database = await start()
  t.teardown(database.close)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
  t.teardown(proxy.close)
  const client = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 3000 })
  const warnings: string[] = []
  const checks = new DatabaseReadiness({ client, log: { ...log, warn: (message: string) => { warnings.push(message) } } as unknown as FastifyBaseLogger, pingTimeoutMs: 3000 })
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
