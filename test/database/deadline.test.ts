// A request's deadline reaches the driver as the `signal` option of every operation
// (`Database#bounded`, database/bounded-work.ts). The service counts on the driver to end each kind of
// wait when that signal aborts: for a reply, for a connection of the pool, and for a server.
import { once } from 'node:events'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { SLACK_MS, proxiedDatabase } from '../faults/fault-app.js'
import { freePort } from '../faults/service-process.js'
import { uniqueDatabaseName } from '../helpers/database.js'
import { resolvesWithin } from '../helpers/until.js'

/**
 * How long the waits below would otherwise last at least: a server's (serverSelectionTimeoutMS);
 * a reply and a connection would wait for ever.
 */
const SELECTION_MS = 5000

t.test('the driver aborts every kind of wait with the signal\'s reason, at once', async (t) => {
  const proxy = await proxiedDatabase(t)
  const client = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: SELECTION_MS, maxPoolSize: 1 })
  t.teardown(async () => await client.close())
  const db = client.db(uniqueDatabaseName('deadline'))
  await db.collection('things').insertMany([{ n: 1 }, { n: 2 }])

  /** Starts an operation, waits until it is `waiting` (what shows it is in the wait tested), then aborts it. */
  const abortedWait = async (
    what: string, waiting: Promise<unknown>, start: (signal: AbortSignal) => Promise<unknown>
  ): Promise<void> => {
    const deadline = new AbortController()
    // Not a TimeoutError: the driver would translate that into its own timeout error.
    const reason = new Error(`${what}: the request's deadline passed`)
    const pending = start(deadline.signal).then(() => 'answered', (error: unknown) => error)
    t.ok(await resolvesWithin(waiting, 10_000), `${what}: under way`)
    const aborted = Date.now()
    deadline.abort(reason)
    const outcome = await pending
    t.equal(outcome, reason, `${what}: rejected with the signal's reason`)
    if (outcome !== reason) t.comment(outcome)
    // At once: the abort itself ends the wait, with no timer or round trip after it, so the only
    // allowance is a busy machine's scheduling noise, well below SELECTION_MS (a wait it did not end).
    const took = Date.now() - aborted
    t.ok(took < SLACK_MS, `${what}: at once (${took} ms)`)
  }
  // A reply that does not come: the database answered, and the proxy holds the answer.
  const reply = proxy.holdReply((command) => command.ping !== undefined)
  await abortedWait('a reply', reply.held, async (signal) => await db.command({ ping: 1 }, { signal }))
  proxy.heal()
  // A connection: the pool's only one is held by a command whose reply is held, and the next
  // checkout has started.
  await db.command({ ping: 1 })
  const holding = proxy.holdReply((command) => command.ping !== undefined)
  const held = db.command({ ping: 1 }).catch(() => {})
  t.ok(await resolvesWithin(holding.held, 10_000), 'the only connection is held')
  await abortedWait('a connection', once(client, 'connectionCheckOutStarted'),
    async (signal) => await db.collection('things').findOne({}, { signal }))
  holding.release()
  await held
  // A server: none can be selected where nothing listens, as the monitor's first check finds.
  const nowhere = new MongoClient(`mongodb://127.0.0.1:${await freePort()}/`,
    { serverSelectionTimeoutMS: SELECTION_MS })
  t.teardown(async () => await nowhere.close())
  await abortedWait('a server', once(nowhere, 'serverHeartbeatFailed'),
    async (signal) => await nowhere.db('admin').command({ ping: 1 }, { signal }))
})
