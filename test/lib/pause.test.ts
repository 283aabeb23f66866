// within(): a promise's result, or an error once its time has passed; atMost(): a wait for a
// promise that goes on once its time has passed. Either leaves the promise to itself.
import { mock } from 'node:test'
import t from 'tap'
import { atMost, unlessAborted, within } from '../../lib/pause.js'

t.test('within: the result in time, the error after it', async (t) => {
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => { mock.timers.reset() })
  t.equal(await within(Promise.resolve('answered'), 1000, () => new Error('late')), 'answered')
  await t.rejects(within(Promise.reject(new Error('refused')), 1000, () => new Error('late')), { message: 'refused' },
    'a failure in time is the failure')

  const never = new Promise<string>(() => {})
  let outcome: unknown
  const waiting = within(never, 1000, () => new Error('late')).catch((error: unknown) => { outcome = error })
  mock.timers.tick(999)
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(outcome, undefined, 'still waiting a millisecond before its time')
  mock.timers.tick(1)
  await waiting
  t.match(outcome, { message: 'late' }, 'given up at its time')
})

t.test('atMost: on when the work ends, or when its time has passed; a failure in time is thrown', async (t) => {
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => { mock.timers.reset() })
  t.equal(await atMost(Promise.resolve('done'), 1000), undefined)
  await t.rejects(atMost(Promise.reject(new Error('refused')), 1000), { message: 'refused' })
  let ended = false
  const waiting = atMost(new Promise(() => {}), 1000).then(() => { ended = true })
  mock.timers.tick(999)
  await new Promise((resolve) => setImmediate(resolve))
  t.notOk(ended, 'still waiting a millisecond before its time')
  mock.timers.tick(1)
  await waiting
  t.ok(ended, 'gone on at its time')
})

t.test('unlessAborted: the result before the abort, the reason after it or when already aborted', async (t) => {
  t.equal(await unlessAborted(Promise.resolve(1), new AbortController().signal), 1)
  const controller = new AbortController()
  const pending = unlessAborted(new Promise<never>(() => {}), controller.signal)
  controller.abort(new Error('gone'))
  await t.rejects(pending, { message: 'gone' })
  await t.rejects(unlessAborted(new Promise<never>(() => {}), AbortSignal.abort(new Error('before'))),
    { message: 'before' }, 'an aborted signal does not wait')
  await t.rejects(unlessAborted(Promise.reject(new Error('failed')), new AbortController().signal),
    { message: 'failed' })
})
