// The keyset filter's shape: every branch of its $or begins with what an index reads (an equality
// or a range on the sort keys), the filters for arrays beside it, so that a cursor page stays an
// index range on real MongoDB (keyset-plan.test.ts reads the plan there); and a cursor taken
// from an array continues from its smallest element ascending, its largest descending.
import { ObjectId, type Document } from 'mongodb'
import t from 'tap'
import { keysetFilter } from '../../list-endpoint/keyset.js'

const id = new ObjectId('665f1c2e9b1d4a3f5c7e8a90')
const start = new Date('2024-06-01T00:00:00.000Z')
const branches = (filter: Document): Document[] => (filter.$or ?? [filter]) as Document[]
const first = (branch: Document): Document => (branch.$and?.[0] ?? branch) as Document

t.test('a date and the _id: ranges first, then the array filters', async (t) => {
  const filter = keysetFilter({ start: 1, _id: 1 }, [start, id])
  t.same(branches(filter).map(first), [
    { start: { $gt: start } }, { start: { $type: [17, 11, 127] } },
    { start: { $eq: start } }, { start: { $eq: start } }
  ], 'the ranges an index reads, and the equality of the tie')
  t.match(branches(filter)[0], { $and: [{}, { $nor: [{ start: { $elemMatch: {} } }] }] },
    'beside a range, no array with an element at or before the date')
  t.match(branches(filter)[2], { $and: [{}, {}, { _id: { $gt: id } }] }, 'the tie continues by _id')
})

t.test('the feed\'s _id order is the plain range it always was', async (t) => {
  t.same(keysetFilter({ _id: 1 }, [id]), { $or: [{ _id: { $gt: id } }, { _id: { $type: [8, 9, 17, 11, 127] } }] })
})

t.test('a cursor from an array: its smallest element ascending, its largest descending, ' +
  'strings in the collation', async (t) => {
  const fr = { locale: 'fr' }
  t.match(first(branches(keysetFilter({ name: 1, _id: 1 }, [['zoé', 'Émile', 'de la Tour'], id], fr))[0] as Document),
    { name: { $gt: 'de la Tour' } })
  t.match(first(branches(keysetFilter({ name: -1, _id: 1 }, [['zoé', 'Émile', 'Zoé'], id], fr))[0] as Document),
    { name: { $lt: 'Zoé' } }, 'Zoé after zoé at strength 3')
  t.match(first(branches(keysetFilter({ name: 1, _id: 1 }, [['b', 'a', 'B'], id]))[0] as Document),
    { name: { $gt: 'B' } }, 'binary order without a collation')
  t.match(first(branches(keysetFilter({ name: 1, _id: 1 }, [[3, 'a', null], id]))[0] as Document),
    { name: { $type: [1, 16, 18, 19, 2, 14, 3, 4, 5, 7, 8, 9, 17, 11, 127] } },
    'null sorts before numbers and strings: every bracket after null')
  t.same(branches(keysetFilter({ name: 1, _id: 1 }, [[], id]))[0], { name: { $not: { $size: 0 } } },
    'after an empty array, ascending: all but the empty ones')
})
