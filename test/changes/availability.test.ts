// Whether a deployment can give change feeds, from its `hello` (no database: the replies of a
// replica set member, a mongos and a standalone server, of 6.0 and of older releases); and the
// check runs within the budget of the request that asks (a feed poll), not one of its own.
import type { Db } from 'mongodb'
import t from 'tap'
import {
  FEEDS_WIRE_VERSION,
  availabilityCheck,
  deploymentReason,
  olderThanFeeds,
  type CheckedDatabase
} from '../../changes/availability.js'

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
function database (budgets: unknown[], signals: unknown[] = []): CheckedDatabase {
  const db = {
    // Admin#command drops `signal` (mongodb 7.8.0): a check that went through it would not be bounded.
    admin: () => { throw new Error('the check asks through Admin#command, which drops the signal') },
    command: async (_command: unknown, options?: { signal?: unknown }) => {
      signals.push(options?.signal)
      return { setName: 'rs', maxWireVersion: 25, ok: 1 }
    },
    listCollections: () => ({
      toArray: async () => [{ name: 'sessions', options: { changeStreamPreAndPostImages: { enabled: true } } }]
    })
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
