// A request's deadline reaches the driver as the `signal` option of every operation
// (`Database#bounded`, plugins/mongodb.ts). The service counts on the driver to end each kind of
// wait when that signal aborts: for a reply, for a connection of the pool, and for a server.
import { MongoClient } from 'mongodb'
import t from 'tap'
import { proxiedDatabase } from '../faults/fault-app.js'
import { freePort } from '../faults/service-process.js'
import { uniqueDatabaseName } from '../helpers/database.js'

t.test('the driver aborts every kind of wait with the signal\'s reason, at once', async (t) => {
  const proxy = await proxiedDatabase(t)
  const client = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 5000, maxPoolSize: 1 })
  t.teardown(async () => await client.close())
  const db = client.db(uniqueDatabaseName('deadline'))
  await db.collection('things').insertMany([{ n: 1 }, { n: 2 }])

  const abortedWait = async (what: string, start: (signal: AbortSignal) => Promise<unknown>): Promise<void> => {
    const deadline = new AbortController()
    // Not a TimeoutError: the driver would translate that into its own timeout error.
    const reason = new Error(`${what}: the request's deadline passed`)
    const pending = start(deadline.signal).then(() => 'answered', (error: unknown) => error)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const aborted = Date.now()
    deadline.abort(reason)
    const outcome = await pending
    t.equal(outcome, reason, `${what}: rejected with the signal's reason`)
    if (outcome !== reason) t.comment(outcome)
    t.ok(Date.now() - aborted < 1000, `${what}: at once`)
  }
  // A reply that never comes (the connection goes silent).
  proxy.halfOpen()
  await abortedWait('a reply', async (signal) => await db.command({ ping: 1 }, { signal }))
  // A connection: the pool's only one is held by a silent command.
  proxy.heal()
  await db.command({ ping: 1 })
  proxy.halfOpen()
  const holder = new AbortController()
  const held = db.command({ ping: 1 }, { signal: holder.signal }).catch(() => {})
  await abortedWait('a connection', async (signal) => await db.collection('things').findOne({}, { signal }))
  holder.abort(new Error('release'))
  await held
  // A server: none can be selected where nothing listens.
  const nowhere = new MongoClient(`mongodb://127.0.0.1:${await freePort()}/`, { serverSelectionTimeoutMS: 5000 })
  t.teardown(async () => await nowhere.close())
  await abortedWait('a server', async (signal) => await nowhere.db('admin').command({ ping: 1 }, { signal }))
})
