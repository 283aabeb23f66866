// Which waiting requests a batch of changes wakes, and when a wait ends, without a database or
// the wall clock: the tests move the waiters' clock themselves.
import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import { mock } from 'node:test'
import t from 'tap'
import type { Change } from '../../changes/change-events.js'
import { Waiters, type WaitClock } from '../../changes/waiters.js'
import { settle } from '../helpers/until.js'

const change = (projects: string[], lost = false): Change =>
  ({ token: { _data: 'k' }, key: 'k', type: 'update', id: 'd', projects, lost, committedAt: 0 })

t.test('a batch wakes the waiters of its projects and those of any change, once', async (t) => {
  const cases: Array<{ name: string, batch: Change[], woken: string[] }> = [
    { name: 'a change of project a', batch: [change(['a'])], woken: ['a', '*'] },
    { name: 'a document moved from a to b', batch: [change(['a', 'b'])], woken: ['a', 'b', '*'] },
    { name: 'a change outside every waiting project', batch: [change(['c'])], woken: ['*'] },
    {
      name: 'a change that lost the history wakes everyone',
      batch: [change(['c']), change([], true)],
      woken: ['a', 'b', '*']
    }
  ]
  for (const { name, batch, woken } of cases) {
    const waiters = new Waiters()
    const calls: string[] = []
    for (const project of ['a', 'b', undefined]) waiters.wait(project, () => { calls.push(project ?? '*') })
    waiters.wakeFor(batch)
    waiters.wakeFor(batch)
    t.same(calls.sort(), [...woken].sort(), name)
    t.equal(waiters.count, 3 - woken.length, `${name}: the others still wait`)
  }
})

t.test('a cancelled wait is not woken; wakeAll wakes the rest', async (t) => {
  const waiters = new Waiters()
  const calls: string[] = []
  const cancel = waiters.wait('a', () => { calls.push('first') })
  waiters.wait('a', () => { calls.push('second') })
  cancel()
  t.equal(waiters.count, 1)
  waiters.wakeAll()
  t.same(calls, ['second'])
  t.equal(waiters.count, 0)
})

t.test('a request that reads while it listens for a change is not counted among those asleep', async (t) => {
  const waiters = new Waiters()
  const calls: string[] = []
  waiters.wait('a', () => { calls.push('asleep') })
  const cancel = waiters.wait('a', () => { calls.push('reading') }, false)
  waiters.wait('b', () => { calls.push('reading b') }, false)
  t.equal(waiters.count, 1, 'one asleep')
  cancel()
  t.equal(waiters.count, 1, 'a cancelled read leaves the count as it was')
  waiters.wakeFor([change(['a'])])
  t.same(calls, ['asleep'])
  t.equal(waiters.count, 0)
  waiters.wakeAll()
  t.same(calls, ['asleep', 'reading b'], 'a reading request is woken as any other')
  t.equal(waiters.count, 0, 'and the count does not go below none')
  // Woken, then cancelled (a request cancels its wait once its read is over): counted out once.
  for (let i = 0; i < 3; i++) {
    const cancelAfter = waiters.wait('c', () => {}, false)
    waiters.wakeFor([change(['c'])])
    cancelAfter()
  }
  waiters.wait('c', () => {})
  t.equal(waiters.count, 1, 'a wait woken then cancelled leaves the count right')
})

/** A clock that moves only when the test says: advance() fires the timers that fall due. */
function manualClock (start = 1_000_000): WaitClock & { advance: (ms: number) => void, pending: () => number[] } {
  let now = start
  const timers = new Set<{ at: number, ms: number, fire: () => void }>()
  return {
    now: () => now,
    after: (ms, fire) => {
      const timer = { at: now + ms, ms, fire }
      timers.add(timer)
      return () => { timers.delete(timer) }
    },
    advance: (ms) => {
      now += ms
      for (const timer of [...timers].filter((timer) => timer.at <= now)) {
        timers.delete(timer)
        timer.fire()
      }
    },
    pending: () => [...timers].map((timer) => timer.ms)
  }
}

/** The service's stop switch, as plugins/changes.ts gives it: a listener added after the stop is called at once. */
function stopSwitch () {
  const listeners = new Set<() => void>()
  let stopped = false
  return {
    onStop: (listener: () => void): () => void => {
      if (stopped) {
        listener()
        return () => {}
      }
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    stop: (): void => {
      stopped = true
      for (const listener of [...listeners]) listener()
      listeners.clear()
    },
    listening: (): number => listeners.size
  }
}

/** A wait of `waiters`, with the response and stop switch it listens to, and whether it has ended. */
function startWait (
  waiters: Waiters, project: string | undefined, until: number, stopping = stopSwitch(), closed = false
) {
  const response = Object.assign(new EventEmitter(), { closed })
  const wait = { response, stopping, ended: false }
  waiters.nextWake(project, until, stopping.onStop, response as unknown as ServerResponse)
    .then(() => { wait.ended = true }, () => {})
  return wait
}

t.test('a wait with no change ends at its deadline, not a millisecond before, and leaves nothing behind', async (t) => {
  const clock = manualClock()
  const waiters = new Waiters(clock)
  const wait = startWait(waiters, 'a', clock.now() + 30_000)
  t.same(clock.pending(), [30_000], 'one timer, for the time left')
  clock.advance(29_999)
  await settle()
  t.notOk(wait.ended, 'still waiting a millisecond before the deadline')
  t.equal(waiters.count, 1)
  clock.advance(1)
  await settle()
  t.ok(wait.ended, 'ended at the deadline')
  t.equal(waiters.count, 0, 'no longer among the waiters')
  t.equal(wait.response.listenerCount('close'), 0, 'no listener left on the response')
  t.equal(wait.stopping.listening(), 0, 'nor on the stop')
})

t.test('a change, the client leaving or the service stopping ends a wait before its deadline; ' +
  'its timer is cancelled', async (t) => {
  const ends: Record<string, (waiters: Waiters, wait: ReturnType<typeof startWait>) => void> = {
    'a change of its project': (waiters) => { waiters.wakeFor([change(['a'])]) },
    'the client leaving': (_waiters, wait) => { wait.response.emit('close') },
    'the service stopping': (_waiters, wait) => { wait.stopping.stop() }
  }
  for (const [name, end] of Object.entries(ends)) {
    const clock = manualClock()
    const waiters = new Waiters(clock)
    const wait = startWait(waiters, 'a', clock.now() + 30_000)
    waiters.wakeFor([change(['b'])])
    await settle()
    t.notOk(wait.ended, `${name}: another project's change does not end it`)
    end(waiters, wait)
    await settle()
    t.ok(wait.ended, `${name}: ended with the clock unmoved`)
    t.same(clock.pending(), [], `${name}: the deadline's timer is cancelled`)
    t.equal(waiters.count, 0)
    t.equal(wait.response.listenerCount('close'), 0)
    t.equal(wait.stopping.listening(), 0)
  }
})

t.test('a deadline already past ends the wait at the next turn; ' +
  'a wait begun after the stop ends at once', async (t) => {
  const clock = manualClock()
  const waiters = new Waiters(clock)
  const late = startWait(waiters, 'a', clock.now() - 5000)
  t.same(clock.pending(), [0], 'a timer of no time, never a negative one')
  clock.advance(0)
  await settle()
  t.ok(late.ended)

  const stopping = stopSwitch()
  stopping.stop()
  const after = startWait(waiters, undefined, clock.now() + 30_000, stopping)
  await settle()
  t.ok(after.ended, 'the stop calls back as the wait begins')
  t.equal(waiters.count, 0)
  t.same(clock.pending(), [])
  t.equal(after.response.listenerCount('close'), 0, 'no listener left on the response')
})

t.test('a client that left before its wait began (its close already past) ' +
  'ends the wait at once, holding no place', async (t) => {
  const clock = manualClock()
  const waiters = new Waiters(clock)
  const stopping = stopSwitch()
  const gone = startWait(waiters, 'a', clock.now() + 30_000, stopping, true)
  await settle()
  t.ok(gone.ended, 'ended with the clock unmoved')
  t.equal(waiters.count, 0, 'no waiter left')
  t.same(clock.pending(), [], 'no timer left')
  t.equal(stopping.listening(), 0, 'nor a stop listener')
  t.equal(gone.response.listenerCount('close'), 0, 'nor a listener on the response')
})

t.test('by default the real clock and timers keep the deadline (node:test fake timers move them)', async (t) => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 })
  t.teardown(() => { mock.timers.reset() })
  const waiters = new Waiters()
  const wait = startWait(waiters, undefined, Date.now() + 1000)
  mock.timers.tick(999)
  await settle()
  t.notOk(wait.ended, 'still waiting a millisecond before the deadline')
  mock.timers.tick(1)
  await settle()
  t.ok(wait.ended, 'ended at the deadline')
  t.equal(waiters.count, 0)
})
