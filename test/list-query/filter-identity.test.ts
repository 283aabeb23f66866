// What cursors and feed tokens are bound to of a filter: the same text for the same question
// however it was written (members of an object, of $in, $nin, $all, branches of $or, $and, $nor in
// any order), another for another question. No database.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { filterIdentity } from '../../list-query/filter-identity.js'

const A = new ObjectId('65cd7e3007370d3300000000')
const B = new ObjectId('65cd7e3007370d3300000001')
const DAY = new Date('2024-05-17T00:00:00Z')

t.test('the same question written otherwise has the same identity', async (t) => {
  const pairs: Array<[object, object, string]> = [
    [{ role: 'volunteer', 'customFields.ticket': 'full' }, { 'customFields.ticket': 'full', role: 'volunteer' },
      'keys'],
    [{ role: { $in: ['volunteer', 'artist'] } }, { role: { $in: ['artist', 'volunteer'] } }, '$in'],
    [{ tags: { $all: ['a', 'b'], $nin: ['c', 'd'] } }, { tags: { $nin: ['d', 'c'], $all: ['b', 'a'] } }, '$all, $nin'],
    [{ $or: [{ session: A }, { session: B }] }, { $or: [{ session: B }, { session: A }] }, '$or'],
    [{ $and: [{ a: 1 }, { b: { $gte: DAY, $lt: DAY } }] }, { $and: [{ b: { $lt: DAY, $gte: DAY } }, { a: 1 }] },
      '$and, and operators inside'],
    [{ role: { $in: ['x', 'x', 'y'] } }, { role: { $in: ['y', 'x'] } }, 'a member repeated']
  ]
  for (const [one, other, what] of pairs) t.equal(filterIdentity(one), filterIdentity(other), what)
})

t.test('another question has another identity', async (t) => {
  const pairs: Array<[object, object, string]> = [
    [{ role: 'volunteer' }, { role: 'artist' }, 'a value'],
    [{ session: A }, { session: A.toHexString() }, 'an id and its text'],
    [{ n: 1 }, { n: '1' }, 'a number and its text'],
    [{ at: DAY }, { at: DAY.toISOString() }, 'a date and its text'],
    [{ a: { $gte: 1 } }, { a: { $gt: 1 } }, 'an operator'],
    [{ $or: [{ a: 1 }, { b: 1 }] }, { $and: [{ a: 1 }, { b: 1 }] }, '$or and $and'],
    [{ list: [1, 2] }, { list: [2, 1] }, 'an array that is no set keeps its order']
  ]
  for (const [one, other, what] of pairs) t.not(filterIdentity(one), filterIdentity(other), what)
})
