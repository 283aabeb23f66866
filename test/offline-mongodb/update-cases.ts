// Update operators: each case's expected document is the answer the MongoDB manual gives for
// it; `manual` names the page. They run against real MongoDB too when MONGODB_URI is set.
import type { Document } from 'mongodb'

const M = 'https://www.mongodb.com/docs/manual/reference/operator/update/'

export interface UpdateCase {
  name: string
  manual: string
  /** The document before (its `_id` is 1). */
  doc: Document
  update: Document
  /** The document after. */
  expect: Document
}

export const updateCases: UpdateCase[] = [
  // $set
  {
    name: '$set adds a field',
    manual: `${M}set/`,
    doc: { _id: 1, a: 1 },
    update: { $set: { b: 2 } },
    expect: { _id: 1, a: 1, b: 2 }
  },
  {
    name: '$set replaces a value of another type',
    manual: `${M}set/`,
    doc: { _id: 1, a: [1] },
    update: { $set: { a: 'x' } },
    expect: { _id: 1, a: 'x' }
  },
  {
    name: '$set on a dotted path creates the embedded documents',
    manual: `${M}set/#set-fields-in-embedded-documents`,
    doc: { _id: 1 },
    update: { $set: { 'a.b.c': 1 } },
    expect: { _id: 1, a: { b: { c: 1 } } }
  },
  {
    name: '$set on a dotted path keeps the sibling fields',
    manual: `${M}set/#set-fields-in-embedded-documents`,
    doc: { _id: 1, a: { x: 1, b: 1 } },
    update: { $set: { 'a.b': 2 } },
    expect: { _id: 1, a: { x: 1, b: 2 } }
  },
  {
    name: '$set of an array element by index',
    manual: `${M}set/#set-elements-in-arrays`,
    doc: { _id: 1, tags: ['a', 'b', 'c'] },
    update: { $set: { 'tags.1': 'B' } },
    expect: { _id: 1, tags: ['a', 'B', 'c'] }
  },
  {
    name: '$set past the end of an array pads it with null',
    manual: `${M}set/#set-elements-in-arrays`,
    doc: { _id: 1, tags: ['a'] },
    update: { $set: { 'tags.3': 'd' } },
    expect: { _id: 1, tags: ['a', null, null, 'd'] }
  },
  // $unset
  {
    name: '$unset removes a field',
    manual: `${M}unset/`,
    doc: { _id: 1, a: 1, b: 2 },
    update: { $unset: { a: '' } },
    expect: { _id: 1, b: 2 }
  },
  {
    name: '$unset of an array element sets it to null',
    manual: `${M}unset/#behavior`,
    doc: { _id: 1, tags: ['a', 'b', 'c'] },
    update: { $unset: { 'tags.1': '' } },
    expect: { _id: 1, tags: ['a', null, 'c'] }
  },
  {
    name: '$unset of a missing field changes nothing',
    manual: `${M}unset/#behavior`,
    doc: { _id: 1, a: 1 },
    update: { $unset: { 'b.c': '' } },
    expect: { _id: 1, a: 1 }
  },
  // $inc and $mul
  {
    name: '$inc adds, also a negative amount and on a dotted path',
    manual: `${M}inc/`,
    doc: { _id: 1, quantity: 10, metrics: { orders: 2 } },
    update: { $inc: { quantity: -2, 'metrics.orders': 1 } },
    expect: { _id: 1, quantity: 8, metrics: { orders: 3 } }
  },
  {
    name: '$inc on a missing field sets it to the amount',
    manual: `${M}inc/#behavior`,
    doc: { _id: 1 },
    update: { $inc: { views: 5 } },
    expect: { _id: 1, views: 5 }
  },
  {
    name: '$mul multiplies',
    manual: `${M}mul/`,
    doc: { _id: 1, price: 10 },
    update: { $mul: { price: 1.25 } },
    expect: { _id: 1, price: 12.5 }
  },
  {
    name: '$mul on a missing field sets it to zero',
    manual: `${M}mul/#apply--mul-operator-to-a-non-existing-field`,
    doc: { _id: 1 },
    update: { $mul: { price: 100 } },
    expect: { _id: 1, price: 0 }
  },
  // $min and $max
  {
    name: '$min keeps the smaller value',
    manual: `${M}min/`,
    doc: { _id: 1, low: 200, high: 700 },
    update: { $min: { low: 150, high: 800 } },
    expect: { _id: 1, low: 150, high: 700 }
  },
  {
    name: '$max keeps the larger value',
    manual: `${M}max/`,
    doc: { _id: 1, low: 200, high: 700 },
    update: { $max: { low: 150, high: 800 } },
    expect: { _id: 1, low: 200, high: 800 }
  },
  {
    name: '$min compares dates',
    manual: `${M}min/#use--min-to-compare-dates`,
    doc: { _id: 1, at: new Date('2024-06-01T00:00:00Z') },
    update: { $min: { at: new Date('2024-01-01T00:00:00Z') } },
    expect: { _id: 1, at: new Date('2024-01-01T00:00:00Z') }
  },
  // $rename
  {
    name: '$rename moves a field, also within an embedded document',
    manual: `${M}rename/`,
    doc: { _id: 1, nmae: 'x', name: { first: 'a', lst: 'b' } },
    update: { $rename: { nmae: 'alias', 'name.lst': 'name.last' } },
    expect: { _id: 1, name: { first: 'a', last: 'b' }, alias: 'x' }
  },
  {
    name: '$rename of a missing field changes nothing',
    manual: `${M}rename/#rename-a-field-that-does-not-exist`,
    doc: { _id: 1, a: 1 },
    update: { $rename: { wife: 'spouse' } },
    expect: { _id: 1, a: 1 }
  },
  // $push
  {
    name: '$push appends a value',
    manual: `${M}push/#append-a-value-to-an-array`,
    doc: { _id: 1, scores: [44, 78] },
    update: { $push: { scores: 89 } },
    expect: { _id: 1, scores: [44, 78, 89] }
  },
  {
    name: '$push on a missing field creates the array',
    manual: `${M}push/#behavior`,
    doc: { _id: 1 },
    update: { $push: { scores: 89 } },
    expect: { _id: 1, scores: [89] }
  },
  {
    name: '$push an array appends it as one element',
    manual: `${M}push/#behavior`,
    doc: { _id: 1, scores: [1] },
    update: { $push: { scores: [2, 3] } },
    expect: { _id: 1, scores: [1, [2, 3]] }
  },
  {
    name: '$push with $each appends each value',
    manual: `${M}push/#append-multiple-values-to-an-array`,
    doc: { _id: 1, scores: [44] },
    update: { $push: { scores: { $each: [90, 92, 85] } } },
    expect: { _id: 1, scores: [44, 90, 92, 85] }
  },
  {
    name: '$push with $each and $position inserts at the position',
    manual: `${M}position/`,
    doc: { _id: 1, scores: [100] },
    update: { $push: { scores: { $each: [50, 60, 70], $position: 0 } } },
    expect: { _id: 1, scores: [50, 60, 70, 100] }
  },
  {
    name: '$push with $each, $sort and $slice keeps the top of the sorted array',
    manual: `${M}push/#use--push-operator-with-multiple-modifiers`,
    doc: { _id: 1, quizzes: [{ wk: 1, score: 10 }, { wk: 2, score: 8 }, { wk: 3, score: 5 }, { wk: 4, score: 6 }] },
    update: {
      $push: {
        quizzes: {
          $each: [{ wk: 5, score: 8 }, { wk: 6, score: 7 }, { wk: 7, score: 6 }], $sort: { score: -1 }, $slice: 3
        }
      }
    },
    expect: { _id: 1, quizzes: [{ wk: 1, score: 10 }, { wk: 2, score: 8 }, { wk: 5, score: 8 }] }
  },
  // $addToSet
  {
    name: '$addToSet adds a value that is not there',
    manual: `${M}addToSet/`,
    doc: { _id: 1, colors: ['blue', 'green'] },
    update: { $addToSet: { colors: 'red' } },
    expect: { _id: 1, colors: ['blue', 'green', 'red'] }
  },
  {
    name: '$addToSet leaves a value that is there',
    manual: `${M}addToSet/#value-already-exists`,
    doc: { _id: 1, colors: ['blue', 'green'] },
    update: { $addToSet: { colors: 'green' } },
    expect: { _id: 1, colors: ['blue', 'green'] }
  },
  {
    name: '$addToSet with $each adds each value not there',
    manual: `${M}addToSet/#each-modifier`,
    doc: { _id: 1, tags: ['electronics', 'supplies'] },
    update: { $addToSet: { tags: { $each: ['camera', 'electronics', 'accessories'] } } },
    expect: { _id: 1, tags: ['electronics', 'supplies', 'camera', 'accessories'] }
  },
  // $pull, $pullAll, $pop
  {
    name: '$pull removes every element equal to a value',
    manual: `${M}pull/#remove-all-items-that-equal-a-specified-value`,
    doc: { _id: 1, fruits: ['apples', 'pears', 'oranges', 'apples'] },
    update: { $pull: { fruits: 'apples' } },
    expect: { _id: 1, fruits: ['pears', 'oranges'] }
  },
  {
    name: '$pull removes the elements that match a condition',
    manual: `${M}pull/#remove-all-items-that-match-a-specified--pull-condition`,
    doc: { _id: 1, votes: [3, 5, 6, 7, 7, 8] },
    update: { $pull: { votes: { $gte: 6 } } },
    expect: { _id: 1, votes: [3, 5] }
  },
  {
    name: '$pull with a document removes the embedded documents matching it as a query',
    manual: `${M}pull/#remove-items-from-an-array-of-documents`,
    doc: { _id: 1, results: [{ item: 'A', score: 5 }, { item: 'B', score: 8, comment: 'x' }] },
    update: { $pull: { results: { score: 8, item: 'B' } } },
    expect: { _id: 1, results: [{ item: 'A', score: 5 }] }
  },
  {
    name: '$pullAll removes every listed value',
    manual: `${M}pullAll/`,
    doc: { _id: 1, scores: [0, 2, 5, 5, 1, 0] },
    update: { $pullAll: { scores: [0, 5] } },
    expect: { _id: 1, scores: [2, 1] }
  },
  {
    name: '$pop -1 removes the first element, 1 the last',
    manual: `${M}pop/`,
    doc: { _id: 1, a: [8, 9, 10], b: [8, 9, 10] },
    update: { $pop: { a: -1, b: 1 } },
    expect: { _id: 1, a: [9, 10], b: [8, 9] }
  },
  // $setOnInsert outside an upsert, and several operators at once
  {
    name: '$setOnInsert does nothing when the update finds a document',
    manual: `${M}setOnInsert/`,
    doc: { _id: 1, a: 1 },
    update: { $set: { b: 1 }, $setOnInsert: { c: 1 } },
    expect: { _id: 1, a: 1, b: 1 }
  },
  {
    name: 'several operators in one update',
    manual: 'https://www.mongodb.com/docs/manual/reference/operator/update/',
    doc: { _id: 1, n: 1, tags: ['a'], old: true },
    update: { $inc: { n: 1 }, $push: { tags: 'b' }, $unset: { old: '' }, $set: { 'meta.seen': true } },
    expect: { _id: 1, n: 2, tags: ['a', 'b'], meta: { seen: true } }
  }
]

/** Updates MongoDB refuses, with the code it answers (manual: "Error Codes"; each operator's page). */
export const refusedUpdates: Array<{ name: string, doc: Document, update: Document, code: number }> = [
  { name: 'an unknown modifier: FailedToParse', doc: { _id: 1 }, update: { $frobnicate: { a: 1 } }, code: 9 },
  { name: '$inc of a string: TypeMismatch', doc: { _id: 1, a: 'x' }, update: { $inc: { a: 1 } }, code: 14 },
  {
    name: '$inc with a non-numeric amount: TypeMismatch', doc: { _id: 1, a: 1 }, update: { $inc: { a: 'x' } }, code: 14
  },
  { name: 'changing _id: ImmutableField', doc: { _id: 1 }, update: { $set: { _id: 2 } }, code: 66 },
  {
    name: 'two operators on one path: ConflictingUpdateOperators',
    doc: { _id: 1 },
    update: { $set: { a: 1 }, $inc: { a: 1 } },
    code: 40
  },
  {
    name: 'a path and its prefix: ConflictingUpdateOperators',
    doc: { _id: 1 },
    update: { $set: { a: 1, 'a-b': 1 }, $inc: { 'a.b': 1 } },
    code: 40
  },
  { name: 'a field inside a number: PathNotViable', doc: { _id: 1, a: 5 }, update: { $set: { 'a.b': 1 } }, code: 28 },
  { name: '$push to a string: BadValue', doc: { _id: 1, a: 'x' }, update: { $push: { a: 1 } }, code: 2 }
]
