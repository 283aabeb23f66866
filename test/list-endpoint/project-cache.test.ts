// Which projects exist, remembered without a database: the bound on the memory, the TTL, and
// one lookup for the requests that want the same project at once.
import t from 'tap'
import { ProjectCache } from '../../list-endpoint/project-cache.js'
import { settle } from '../helpers/until.js'

t.test('the memory is bounded and forgets the oldest first, and entries expire', async (t) => {
  const cache = new ProjectCache(1000, 3)
  for (const id of ['a', 'b', 'c']) cache.set(id, true, 0)
  cache.set('d', false, 0)
  t.equal(cache.size, 3)
  t.equal(cache.get('a', 1), undefined, 'the oldest went')
  t.equal(cache.get('d', 1), false)
  t.equal(cache.get('b', 999), true)
  t.equal(cache.get('b', 1000), undefined, 'expired at the TTL')
  t.equal(cache.size, 2, 'an expired entry is dropped when read')
})

interface PendingAsk { ask: () => Promise<boolean>, asked: () => number, answer: (exists: boolean | Error) => void }

/** A lookup that answers when the test says. */
function pendingAsk (): PendingAsk {
  let asked = 0
  const settles: Array<(exists: boolean | Error) => void> = []
  return {
    ask: async () => {
      asked++
      return await new Promise<boolean>((resolve, reject) => {
        settles.push((exists) => { if (exists instanceof Error) reject(exists); else resolve(exists) })
      })
    },
    asked: () => asked,
    answer: (exists) => { for (const settle of settles.splice(0)) settle(exists) }
  }
}

t.test('lookups of one project at once ask once, and the answer is remembered', async (t) => {
  const cache = new ProjectCache(60_000, 10)
  const { ask, asked, answer } = pendingAsk()
  const first = cache.lookup('p', ask)
  const second = cache.lookup('p', ask)
  const other = cache.lookup('q', ask)
  t.equal(asked(), 2, 'one lookup for p, one for q')
  answer(true)
  t.same(await Promise.all([first, second, other]), [true, true, true])
  t.equal(cache.lookup('p', ask), true, 'then remembered: no lookup')
  t.equal(asked(), 2)
})

t.test('a failed lookup fails those that waited for it, and the next one asks again', async (t) => {
  const cache = new ProjectCache(60_000, 10)
  const { ask, asked, answer } = pendingAsk()
  const both = [cache.lookup('p', ask), cache.lookup('p', ask)]
  const failure = new Error('the database did not answer')
  answer(failure)
  for (const lookup of both) await t.rejects(Promise.resolve(lookup), failure)
  const again = cache.lookup('p', ask)
  t.equal(asked(), 2, 'asked again: a failure is not remembered')
  answer(false)
  t.equal(await again, false)
  t.equal(cache.get('p'), false, 'an absent project is remembered too')
})

t.test('PROJECT_CACHE_TTL_MS=0: every lookup asks for itself', async (t) => {
  const cache = new ProjectCache(0, 10)
  const { ask, asked, answer } = pendingAsk()
  const both = [cache.lookup('p', ask), cache.lookup('p', ask)]
  t.equal(asked(), 2)
  answer(true)
  t.same(await Promise.all(both), [true, true])
})

t.test('a request that joined a lookup which ran out of time asks again; its own lookup\'s failure stands',
  async (t) => {
    const cache = new ProjectCache(60_000, 10)
    const { ask, asked, answer } = pendingAsk()
    const late = Object.assign(new Error('the lookup ran out of time'), { name: 'TimeoutError' })
    // The first request began the lookup; it has no time left once it fails.
    const first = cache.exists('p', { ask, wait: async (lookup) => await lookup, askAgain: () => false })
    // The second joined it, and still has time.
    const second = cache.exists('p', {
      ask, wait: async (lookup) => await lookup, askAgain: (error) => (error as Error).name === 'TimeoutError'
    })
    t.equal(asked(), 1, 'one lookup for both')
    answer(late)
    await t.rejects(first, late, 'the request whose lookup it was: its failure')
    await settle()
    t.equal(asked(), 2, 'the one that joined asked again')
    answer(true)
    t.equal(await second, true)
  })

t.test('a request whose own lookup ran out of time does not ask again, whatever its time', async (t) => {
  const cache = new ProjectCache(60_000, 10)
  const { ask, asked, answer } = pendingAsk()
  const late = Object.assign(new Error('the lookup ran out of time'), { name: 'TimeoutError' })
  const only = cache.exists('p', { ask, wait: async (lookup) => await lookup, askAgain: () => true })
  answer(late)
  await t.rejects(only, late)
  t.equal(asked(), 1)
})

t.test('a request waits for a shared lookup only within its own deadline', async (t) => {
  const cache = new ProjectCache(60_000, 10)
  const { ask, answer } = pendingAsk()
  const first = cache.exists('p', { ask, wait: async (lookup) => await lookup, askAgain: () => false })
  // Its deadline: the wait gives up first, and the lookup goes on for the other.
  const deadline = new Error('this request\'s deadline')
  let giveUp = (): void => {}
  const second = cache.exists('p', {
    ask,
    wait: async (lookup) => await Promise.race([lookup, new Promise<never>((_resolve, reject) => {
      giveUp = () => { reject(deadline) }
    })]),
    askAgain: () => false
  })
  giveUp()
  await t.rejects(second, deadline)
  answer(true)
  t.equal(await first, true, 'the lookup answered the request that waited for it')
})
