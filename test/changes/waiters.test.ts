// Which waiting requests a batch of changes wakes, without a database or a clock.
import t from 'tap'
import type { Change } from '../../changes/change-events.js'
import { Waiters } from '../../changes/waiters.js'

const change = (projects: string[], lost = false): Change =>
  ({ token: { _data: 'k' }, key: 'k', type: 'update', id: 'd', projects, lost, committedAt: 0 })

t.test('a batch wakes the waiters of its projects and those of any change, once', async (t) => {
  const cases: Array<{ name: string, batch: Change[], woken: string[] }> = [
    { name: 'a change of project a', batch: [change(['a'])], woken: ['a', '*'] },
    { name: 'a document moved from a to b', batch: [change(['a', 'b'])], woken: ['a', 'b', '*'] },
    { name: 'a change outside every waiting project', batch: [change(['c'])], woken: ['*'] },
    { name: 'a change that lost the history wakes everyone', batch: [change(['c']), change([], true)], woken: ['a', 'b', '*'] }
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
