// A DeadlineSignal stands in for an AbortSignal in the driver's `signal` option (database/deadline.ts):
// it behaves as one where the driver looks, and the driver looks nowhere else — while an operation
// succeeds, and while it waits for a server, a connection or a reply and is aborted.
import { MongoClient } from 'mongodb'
import t from 'tap'
import { DeadlineSignal } from '../../database/deadline.js'
import { proxiedDatabase } from '../faults/fault-app.js'
import { freePort } from '../faults/service-process.js'
import { uniqueDatabaseName } from '../helpers/database.js'

const ABORT_MEMBERS = new Set(['addEventListener', 'removeEventListener', 'throwIfAborted', 'aborted', 'reason'])

t.test('it behaves as an AbortSignal where the driver looks', async (t) => {
  const deadline = new DeadlineSignal()
  const heard: unknown[] = []
  function listener (this: DeadlineSignal): void { heard.push(this.reason) }
  const removed = (): void => { heard.push('removed listener called') }
  deadline.addEventListener('abort', listener)
  deadline.addEventListener('abort', removed)
  deadline.removeEventListener('abort', removed)
  t.equal(deadline.aborted, false)
  t.doesNotThrow(() => { deadline.throwIfAborted() })
  const reason = new DOMException('late', 'TimeoutError')
  deadline.abort(reason)
  deadline.abort(new Error('second'))
  t.same(heard, [reason], 'each listener once, with `this` the signal; a removed one never; a second abort changes nothing')
  t.equal(deadline.aborted, true)
  t.equal(deadline.reason, reason)
  t.throws(() => { deadline.throwIfAborted() }, reason)
  deadline.addEventListener('abort', listener)
  t.equal(heard.length, 1, 'a listener added after the abort is not called, as on an AbortSignal')
  t.equal(deadline.listening, 0)
})

/** The signal seen through a proxy that records every member the driver reads of it. */
function watched (): { deadline: DeadlineSignal, signal: AbortSignal, read: Set<string> } {
  const deadline = new DeadlineSignal()
  const read = new Set<string>()
  const signal = new Proxy(deadline, {
    get (target, name) {
      read.add(String(name))
      const value = Reflect.get(target, name, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    }
  }) as unknown as AbortSignal
  return { deadline, signal, read }
}

t.test('the driver reads nothing else of it, and aborts every kind of wait with its reason', async (t) => {
  const proxy = await proxiedDatabase(t)
  const client = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 5000, maxPoolSize: 1 })
  t.teardown(async () => await client.close())
  const db = client.db(uniqueDatabaseName('deadline'))
  await db.collection('things').insertMany([{ n: 1 }, { n: 2 }])
  const read = new Set<string>()
  const note = (names: Set<string>): void => { for (const name of names) read.add(name) }

  // Operations that end well: every listener the driver added is gone again.
  const operations: Array<(signal: AbortSignal) => Promise<unknown>> = [
    async (signal) => await db.command({ find: 'things', filter: {} }, { raw: true, signal }),
    async (signal) => await db.collection('things').find({}, { signal }).toArray(),
    async (signal) => await db.collection('things').countDocuments({}, { signal }),
    async (signal) => await db.collection('things').findOne({ n: 2 }, { signal })
  ]
  for (const operation of operations) {
    const { deadline, signal, read: seen } = watched()
    await operation(signal)
    note(seen)
    t.equal(deadline.listening, 0, 'no listener left once the operation ended')
  }

  const abortedWait = async (what: string, start: (signal: AbortSignal) => Promise<unknown>): Promise<void> => {
    const { deadline, signal, read: seen } = watched()
    // Not a TimeoutError: the driver would translate that into its own timeout error.
    const reason = new Error(`${what}: the request's deadline passed`)
    const pending = start(signal).then(() => 'answered', (error: unknown) => error)
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.ok(deadline.listening > 0, `${what}: the driver listens while it waits`)
    const aborted = Date.now()
    deadline.abort(reason)
    const outcome = await pending
    t.equal(outcome, reason, `${what}: rejected with the signal's reason`)
    if (outcome !== reason) t.comment(outcome)
    t.ok(Date.now() - aborted < 1000, `${what}: at once`)
    note(seen)
  }
  // A reply that never comes (the connection goes silent).
  proxy.halfOpen()
  await abortedWait('a reply', async (signal) => await db.command({ ping: 1 }, { signal }))
  // A connection: the pool's only one is held by a silent command.
  proxy.heal()
  await db.command({ ping: 1 })
  proxy.halfOpen()
  const holder = new DeadlineSignal()
  const held = db.command({ ping: 1 }, { signal: holder.signal }).catch(() => {})
  await abortedWait('a connection', async (signal) => await db.collection('things').findOne({}, { signal }))
  holder.abort(new Error('release'))
  await held
  // A server: none can be selected where nothing listens.
  const nowhere = new MongoClient(`mongodb://127.0.0.1:${await freePort()}/`, { serverSelectionTimeoutMS: 5000 })
  t.teardown(async () => await nowhere.close())
  await abortedWait('a server', async (signal) => await nowhere.db('admin').command({ ping: 1 }, { signal }))

  const others = [...read].filter((name) => !ABORT_MEMBERS.has(name))
  t.same(others, [], `the driver reads only ${[...ABORT_MEMBERS].join(', ')} of its signal`)
})
