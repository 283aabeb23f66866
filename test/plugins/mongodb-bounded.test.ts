// Database#bounded (database/bounded-work.ts): a request's operations share one signal. The deadline
// aborts them all; a server's refusal of one leaves the others to their answers, since an
// abort in flight costs a connection; a database out of reach stops them all at once.
import { MongoNetworkError } from 'mongodb'
import t from 'tap'
import { CLIENT_MARGIN_MS } from '../../plugins/mongodb.js'
import { build } from '../helpers/build.js'

/** A request's database work ends this long after it began (QUERY_TIMEOUT_MS and the client's margin). */
const BUDGET_MS = 60_000 + CLIENT_MARGIN_MS
/**
 * A call on a shared budget with 50 ms left is aborted at its shared deadline; with a budget of
 * its own it would be aborted BUDGET_MS after it began. Halfway between the two tells them apart,
 * whatever the timer's delay on a busy machine.
 */
const HALF_A_BUDGET_MS = BUDGET_MS / 2

t.test('one operation refused by the server: the other of the same request is not aborted', async (t) => {
  const fastify = await build(t)
  const things = fastify.database.collection('things')
  await things.insertOne({ _id: 1, name: 'kept' } as never)
  const db = fastify.database.db()
  let other: Promise<unknown> = Promise.resolve()
  let signalSeen: AbortSignal | undefined
  const request = fastify.database.bounded(async (signal) => {
    signalSeen = signal
    const refused = db.command({ noSuchCommand: 1 }, { signal })
    // Started as the first fails, so that it is in flight when the request's work rejects.
    other = refused.catch(() => {}).then(() => things.findOne({ _id: 1 } as never, { signal }))
    return await Promise.all([refused, other])
  })
  await t.rejects(request, { name: 'MongoServerError', code: 59 }, 'the server\'s refusal reaches the caller')
  t.same(await other, { _id: 1, name: 'kept' }, 'the other operation answered')
  t.equal(signalSeen?.aborted, false, 'the signal is not aborted by the refusal')
})

t.test('after a refusal the deadline still bounds the others', async (t) => {
  const fastify = await build(t, { config: { QUERY_TIMEOUT_MS: 200 } })
  const db = fastify.database.db()
  let aborted: Promise<unknown> = Promise.resolve()
  const request = fastify.database.bounded(async (signal) => {
    aborted = new Promise((resolve) => { signal.addEventListener('abort', () => { resolve(signal.reason) }) })
    return await db.command({ noSuchCommand: 1 }, { signal })
  })
  await t.rejects(request, { name: 'MongoServerError', code: 59 })
  t.match(await aborted, { name: 'TimeoutError' }, 'aborted by the deadline, not by the refusal')
})

t.test('a database out of reach: the others of the request stop at once', async (t) => {
  const fastify = await build(t)
  const things = fastify.database.collection('things')
  const reset = new MongoNetworkError('connection reset')
  let other: Promise<unknown> = Promise.resolve()
  const request = fastify.database.bounded(async (signal) => {
    const failed = Promise.reject(reset)
    other = failed.catch(() => {}).then(() => things.findOne({}, { signal }))
      .then(() => 'answered', (error: unknown) => error)
    return await Promise.all([failed, other])
  })
  await t.rejects(request, reset)
  t.equal(await other, reset, 'the other operation rejected with the failure as the abort\'s reason')
})

t.test('a request\'s deadline counts from its arrival, before any database work', async (t) => {
  const fastify = await build(t, {
    config: { QUERY_TIMEOUT_MS: 60_000 },
    extend: (app) => { app.get('/deadline', async (request) => ({ deadline: request.databaseDeadline })) }
  })
  const before = Date.now()
  const { deadline } = (await fastify.inject('/deadline')).json<{ deadline: number }>()
  const after = Date.now()
  t.ok(deadline >= before + BUDGET_MS && deadline <= after + BUDGET_MS,
    `set on arrival (${deadline - before} ms ahead): QUERY_TIMEOUT_MS and the client's margin`)
})

t.test('calls given the same budget (a request) share one deadline, set by the first', async (t) => {
  const fastify = await build(t, { config: { QUERY_TIMEOUT_MS: 60_000 } })
  const things = fastify.database.collection('things')
  const budget = { databaseDeadline: 0 }
  const before = Date.now()
  await fastify.database.bounded(async (signal) => await things.findOne({}, { signal }), budget)
  const after = Date.now()
  t.ok(budget.databaseDeadline >= before + BUDGET_MS && budget.databaseDeadline <= after + BUDGET_MS,
    'the first call sets the deadline: QUERY_TIMEOUT_MS and the client\'s margin, from its start')

  // A budget with 50 ms left: the next call is aborted then, not after another whole budget.
  budget.databaseDeadline = Date.now() + 50
  const reason = await fastify.database.bounded(async (signal) => await new Promise((resolve) => {
    signal.addEventListener('abort', () => { resolve(signal.reason) })
  }), budget)
  t.match(reason, { name: 'TimeoutError' }, 'aborted at the shared deadline')
  const late = Date.now() - budget.databaseDeadline
  t.ok(late < HALF_A_BUDGET_MS, `${late} ms after the shared deadline: ` +
    `long before a budget of its own would have ended (${BUDGET_MS} ms after the call began)`)

  let ran = false
  await t.rejects(fastify.database.bounded(async () => { ran = true }, budget), { name: 'TimeoutError' },
    'a budget spent: a timeout at once')
  t.notOk(ran, 'and no database work')
  t.equal(await fastify.database.bounded(async () => 'own'), 'own', 'without a budget, a call has its own')
})

t.test('work that does not heed the signal still ends at the deadline', async (t) => {
  // As a hello sent through Admin#command did (mongodb 7.8.0 does not pass its signal on).
  const fastify = await build(t, { config: { QUERY_TIMEOUT_MS: 200 } })
  let seen: AbortSignal | undefined
  const request = fastify.database.bounded(async (signal) => { seen = signal; return await new Promise(() => {}) })
  await t.rejects(request, { name: 'TimeoutError' }, 'the call fails at its deadline, not when the work ends')
  t.equal(seen?.aborted, true, 'and the work\'s signal is aborted')
})
