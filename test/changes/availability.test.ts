// The check of whether the database can give a collection's feed runs within the budget of the
// request that asks (a feed poll): its commands get that request's deadline, not one of their own.
import type { Db } from 'mongodb'
import t from 'tap'
import { availabilityCheck, type CheckedDatabase } from '../../changes/availability.js'

/** A database whose deployment is a replica set of MongoDB 8.0 and whose collections record images; it notes the budget of every bounded call. */
function database (budgets: unknown[]): CheckedDatabase {
  const db = {
    admin: () => ({ command: async () => ({ setName: 'rs', maxWireVersion: 25, ok: 1 }) }),
    listCollections: () => ({ toArray: async () => [{ name: 'sessions', options: { changeStreamPreAndPostImages: { enabled: true } } }] })
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
  const check = availabilityCheck(database(budgets), 1000, 60_000)
  const request = { databaseDeadline: 0 }
  t.equal(await check('sessions', true, request), undefined, 'the feed can be given')
  t.same(budgets, [request], 'its commands ran under the request\'s budget')
  t.equal(await check('sessions', true), undefined)
  t.same(budgets, [request, undefined], 'without a caller (start-up), a budget of its own')
})
