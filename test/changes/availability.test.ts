// Whether a deployment can give change feeds, from its `hello` (no database: the replies of a
// replica set member, a mongos and a standalone server, of 6.0 and of older releases); the
// check runs within the budget of the request that asks (a feed poll), not one of its own; and
// its verdict is remembered, renewed beside the requests once old.
import type { Db } from 'mongodb'
import t from 'tap'
import {
  FEEDS_WIRE_VERSION,
  availabilityCheck,
  deploymentReason,
  olderThanFeeds,
  rememberedAvailability,
  type AvailabilityCheck,
  type CheckedDatabase
} from '../../changes/availability.js'
import { settle } from '../helpers/until.js'

const member = (maxWireVersion: number) => ({ isWritablePrimary: true, setName: 'rs0', maxWireVersion, ok: 1 })
const mongos = (maxWireVersion: number) => ({ isWritablePrimary: true, msg: 'isdbgrid', maxWireVersion, ok: 1 })

t.test('a replica set or a sharded cluster of 6.0 or later gives feeds', async (t) => {
  t.equal(FEEDS_WIRE_VERSION, 17, 'wire version 17 is MongoDB 6.0')
  for (const wire of [17, 21, 25]) {
    t.equal(deploymentReason(member(wire)), undefined, `a member of wire version ${wire}`)
    t.equal(deploymentReason(mongos(wire)), undefined, `a mongos of wire version ${wire}`)
    t.equal(olderThanFeeds(member(wire)), false)
  }
})

t.test('a server older than 6.0 cannot, and the reason names its version', async (t) => {
  t.equal(olderThanFeeds(member(13)), true, 'asks buildInfo for the release')
  t.match(deploymentReason(member(13), '5.0.14'), /MongoDB 5\.0\.14: change feeds need MongoDB 6\.0 or later/,
    'named by buildInfo')
  t.match(deploymentReason(mongos(16)), /MongoDB 5\.3 \(wire version 16\): change feeds need MongoDB 6\.0 or later/,
    'named by its wire version when buildInfo is not known')
  t.match(deploymentReason(member(11)), /a MongoDB release of wire version 11/, 'a development release')
})

t.test('a standalone server cannot, whatever its version', async (t) => {
  t.match(deploymentReason({ isWritablePrimary: true, maxWireVersion: 25, ok: 1 }),
    /standalone server: change feeds need a replica set or a sharded cluster/)
})

/**
 * A database whose deployment is a replica set of MongoDB 8.0 and whose collections record
 * images; it notes the budget of every bounded call and the signal each command was given.
 */
function database (budgets: unknown[], signals: unknown[] = [], filters: unknown[] = []): CheckedDatabase {
  const catalogue = [
    { name: 'sessions', options: { changeStreamPreAndPostImages: { enabled: true } } },
    { name: 'teams', options: {} }
  ]
  const db = {
    // Admin#command drops `signal` (mongodb 7.8.0): a check that went through it would not be bounded.
    admin: () => { throw new Error('the check asks through Admin#command, which drops the signal') },
    command: async (_command: unknown, options?: { signal?: unknown }) => {
      signals.push(options?.signal)
      return { setName: 'rs', maxWireVersion: 25, ok: 1 }
    },
    listCollections: (filter: { name: string | { $in: string[] } }) => {
      filters.push(filter)
      const names = typeof filter.name === 'string' ? [filter.name] : filter.name.$in
      return { toArray: async () => catalogue.filter((info) => names.includes(info.name)) }
    }
  } as unknown as Db
  return {
    db: () => db,
    bounded: async (work, budget) => {
      budgets.push(budget)
      return await work(new AbortController().signal)
    },
    timed: async (_command, work) => await work()
  }
}

t.test('the check runs within the caller\'s budget', async (t) => {
  const budgets: unknown[] = []
  const signals: unknown[] = []
  const check = availabilityCheck(database(budgets, signals), 1000, 60_000)
  const request = { databaseDeadline: 0 }
  t.equal(await check('sessions', true, request), undefined, 'the feed can be given')
  t.same(budgets, [request], 'its commands ran under the request\'s budget')
  t.ok(signals.length === 1 && signals[0] instanceof AbortSignal, 'hello was given the budget\'s signal')
  t.equal(await check('sessions', true), undefined)
  t.same(budgets, [request, undefined], 'without a caller (start-up), a budget of its own')
})

t.test('every collection at once: hello, then one listCollections for the scoped ones', async (t) => {
  const budgets: unknown[] = []
  const signals: unknown[] = []
  const filters: unknown[] = []
  const check = availabilityCheck(database(budgets, signals, filters), 1000, 60_000)
  const lists = new Map([['sessions', true], ['teams', true], ['rooms', true], ['projects', false]])
  const reasons = await check.all?.(lists)
  t.equal(reasons?.get('sessions'), undefined, 'a collection with its images can give its feed')
  t.match(reasons?.get('teams'), /the collection teams does not record change stream pre- and post-images/)
  t.match(reasons?.get('rooms'), /the collection rooms does not exist yet/)
  t.equal(reasons?.get('projects'), undefined, 'a list of no project needs no images')
  t.equal(signals.length, 1, 'one hello')
  t.same(filters, [{ name: { $in: ['sessions', 'teams', 'rooms'] } }], 'one listCollections')
  t.same(budgets, [undefined], 'on a budget of its own')
})

t.test('the verdicts of a check of every collection are remembered', async (t) => {
  const asked: string[] = []
  const check = Object.assign(async (collection: string) => {
    asked.push(collection)
    return undefined
  }, {
    all: async (collections: ReadonlyMap<string, boolean>) =>
      new Map([...collections.keys()].map((name) => [name, name === 'teams' ? 'no images' : undefined]))
  })
  const warnings: string[] = []
  const remembered = rememberedAvailability(check, 60_000, (message) => { warnings.push(message) })
  await remembered.all?.(new Map([['sessions', true], ['teams', true]]))
  t.match(warnings, [/change feeds of teams answer 503 CHANGES_UNAVAILABLE: no images/], 'a reason said at once')
  t.equal(await remembered('sessions', true), undefined)
  t.same(asked, [], 'a feed can be given: known without a check')
  t.equal(await remembered('teams', true), undefined, 'one that could not is asked again at its first feed')
  t.same(asked, ['teams'])
})

t.test('a refused listCollections is the verdict of the collections that need it only', async (t) => {
  const checked = database([])
  const db = checked.db() as unknown as { listCollections: () => unknown }
  db.listCollections = () => ({
    toArray: async () => { throw Object.assign(new Error('not authorized on listing'), { code: 13 }) }
  })
  const check = availabilityCheck(checked, 1000, 60_000)
  const reasons = await check.all?.(new Map([['sessions', true], ['projects', false]]))
  t.match(reasons?.get('sessions'), /lacks the privileges change feeds need/, 'a project\'s list needs its images')
  t.equal(reasons?.get('projects'), undefined, 'a list of no project does not: as its own check says')
  t.equal(await check('projects', false), undefined)
})

t.test('a check of every collection leaves the ones a request is checking to it', async (t) => {
  const { check: one, calls } = scriptedCheck()
  const batches: Array<{ names: string[], answer: (reasons: Map<string, string | undefined>) => void }> = []
  const check = Object.assign(one, {
    all: async (collections: ReadonlyMap<string, boolean>) =>
      await new Promise<Map<string, string | undefined>>((resolve) => {
        batches.push({ names: [...collections.keys()], answer: resolve })
      })
  })
  const remembered = rememberedAvailability(check, 60_000, () => {})
  const teams = remembered('teams', true)
  await settle()
  const every = remembered.all?.(new Map([['sessions', true], ['teams', true]]))
  t.same(batches.map((batch) => batch.names), [['sessions']], 'teams is left to the request\'s check')
  const joining = remembered('sessions', true)
  await settle()
  t.equal(calls.length, 1, 'a request for sessions waits for the check of every collection')
  batches[0]?.answer(new Map([['sessions', undefined]]))
  calls[0]?.fail(new Error('the database is slow'))
  await t.rejects(teams)
  await t.rejects(Promise.resolve(every), 'whose answer waits for that request\'s check')
  t.equal(await joining, undefined)
  t.equal(await remembered('sessions', true), undefined, 'sessions is remembered')
  t.equal(calls.length, 1, 'without a check')
  const again = remembered('teams', true)
  await settle()
  t.equal(calls.length, 2, 'teams, whose check failed, is checked again')
  calls[1]?.answer(undefined)
  t.equal(await again, undefined)
})

/** A check the test answers: each call waits for `answer` or `fail`. */
function scriptedCheck () {
  const calls: Array<{ budget: unknown, answer: (reason?: string) => void, fail: (error: Error) => void }> = []
  const check: AvailabilityCheck = async (_collection, _scoped, budget) =>
    await new Promise<string | undefined>((resolve, reject) => {
      calls.push({ budget, answer: resolve, fail: reject })
    })
  return { check, calls }
}

t.test('a verdict that the feed can be given is kept; grown old, it is renewed beside the requests, ' +
  'which do not wait for it', async (t) => {
  const { check, calls } = scriptedCheck()
  const warnings: string[] = []
  let clock = 1_000_000
  const remembered = rememberedAvailability(check, 60_000, (message) => { warnings.push(message) }, () => clock)
  const request = { databaseDeadline: 0 }
  const first = remembered('sessions', true, request)
  const joining = remembered('sessions', true, { databaseDeadline: 0 })
  await settle()
  t.equal(calls.length, 1, 'one check for the requests that came while it ran')
  t.equal(calls[0]?.budget, request, 'within the budget of the request that asked')
  calls[0]?.answer(undefined)
  t.same([await first, await joining], [undefined, undefined], 'the feed can be given')
  clock += 59_999
  t.equal(await remembered('sessions', true, request), undefined, 'kept while it is fresh')
  t.equal(calls.length, 1, 'no check then')
  clock += 1
  t.equal(await remembered('sessions', true, request), undefined, 'grown old: answered at once with the kept verdict')
  t.equal(await remembered('sessions', true, request), undefined)
  t.equal(calls.length, 2, 'while one check renews it')
  t.equal(calls[1]?.budget, undefined, 'on a budget of its own, not a request\'s')
  calls[1]?.fail(new Error('the database is slow'))
  await settle()
  t.equal(await remembered('sessions', true, request), undefined, 'a renewal that failed leaves the verdict')
  t.equal(calls.length, 3, 'and the next request has it tried again')
  calls[2]?.answer('the collection sessions does not record change stream pre- and post-images')
  await settle()
  const denied = remembered('sessions', true, request)
  await settle()
  t.equal(calls.length, 4, 'a verdict that it cannot is asked again by the next request')
  calls[3]?.answer('the collection sessions does not record change stream pre- and post-images')
  t.match(await denied, /pre- and post-images/, 'which waits for it')
  t.equal(warnings.length, 1, 'the reason said once')
})
