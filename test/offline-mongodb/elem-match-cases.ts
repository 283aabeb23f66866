// $elemMatch in both of mongod's forms (https://www.mongodb.com/docs/manual/reference/operator/query/elemMatch/).
// Which form a query takes is the rule of expression_parser.cpp (parseElemMatch): a first
// field that is an operator, and not a pathless one ($and, $or, $nor, $where, $expr...),
// makes the value form; anything else is the object form, which only matches documents.
import type { ConformanceCase } from './conformance-cases.js'

const E = 'https://www.mongodb.com/docs/manual/reference/operator/query/elemMatch/'
const ARRAY_QUERY =
  'https://www.mongodb.com/docs/manual/tutorial/query-arrays/#query-for-an-array-element-that-meets-multiple-criteria'
const ARRAY_OF_DOCUMENTS =
  'https://www.mongodb.com/docs/manual/tutorial/query-array-of-documents/#a-single-nested-document-meets-multiple-query-conditions-on-nested-fields'

export const elemMatchCases: ConformanceCase[] = [
  // Value form: one element satisfies every operator
  {
    name: 'value form: one element in a string range',
    manual: `${E}#element-match`,
    values: [['a', 'e'], ['c'], ['b', 'x'], 'c', []],
    filter: { v: { $elemMatch: { $gte: 'b', $lt: 'd' } } },
    expect: [1, 2]
  },
  {
    name: 'without $elemMatch the range may be met by different elements',
    manual: ARRAY_QUERY,
    values: [['a', 'e'], ['c'], ['b', 'x'], 'c', []],
    filter: { v: { $gte: 'b', $lt: 'd' } },
    expect: [0, 1, 2, 3]
  },
  {
    name: 'value form with $regex and $options',
    manual: `${E}#element-match`,
    values: [['Yoga', 'x'], ['youth'], ['no yoga'], 'yoga'],
    filter: { v: { $elemMatch: { $regex: '^yo', $options: 'i' } } },
    expect: [0, 1]
  },
  {
    name: 'value form with $in',
    manual: `${E}#element-match`,
    values: [['a', 'b'], ['c'], [], 'b'],
    filter: { v: { $elemMatch: { $in: ['b', 'z'] } } },
    expect: [0]
  },
  {
    name: 'value form with $nin: some element is outside the list',
    manual: `${E}#element-match`,
    values: [['a', 'b'], ['a'], ['c'], [], 'c'],
    filter: { v: { $elemMatch: { $nin: ['a'] } } },
    expect: [0, 2]
  },
  {
    name: 'value form with $ne: some element differs (an empty array has none)',
    manual: `${E}#element-match`,
    values: [['a', 'b'], ['a'], []],
    filter: { v: { $elemMatch: { $ne: 'a' } } },
    expect: [0]
  },
  {
    name: 'value form with $all: one element equals every value',
    manual: `${E}#element-match`,
    values: [['a', 'b'], ['b'], [['a']]],
    filter: { v: { $elemMatch: { $all: ['a'] } } },
    expect: [0]
  },
  {
    name: 'value form with $not',
    manual: `${E}#element-match`,
    values: [[1, 7], [8], [9, 10]],
    filter: { v: { $elemMatch: { $not: { $gt: 5 } } } },
    expect: [0]
  },
  {
    name: 'value form takes a nested array as one value, never its elements',
    manual: `${E}#element-match`,
    values: [[[1, 5]], [3], [[3]]],
    filter: { v: { $elemMatch: { $gte: 2, $lte: 4 } } },
    expect: [1]
  },
  {
    name: 'value form $eq of a nested array matches the whole array',
    manual: `${E}#element-match`,
    values: [[[1, 5]], [1], [[1]]],
    filter: { v: { $elemMatch: { $eq: [1, 5] } } },
    expect: [0]
  },
  {
    name: 'value form with $size of nested arrays',
    manual: `${E}#element-match`,
    values: [[[1, 5], 3], [[1]], [1, 2]],
    filter: { v: { $elemMatch: { $size: 2 } } },
    expect: [0]
  },
  {
    name: 'value form with $type',
    manual: `${E}#element-match`,
    values: [[1, 'a'], [1, 2], [['a']]],
    filter: { v: { $elemMatch: { $type: 'string' } } },
    expect: [0]
  },
  {
    name: 'value form with $exists matches any element',
    manual: `${E}#element-match`,
    values: [[null], [], 'a'],
    filter: { v: { $elemMatch: { $exists: true } } },
    expect: [0]
  },
  {
    name: 'value form with $exists: false matches no element',
    manual: `${E}#element-match`,
    values: [[null], ['a'], [], 'a'],
    filter: { v: { $elemMatch: { $exists: false } } },
    expect: []
  },
  // Object form
  {
    name: 'object form: fields of one embedded document',
    manual: ARRAY_OF_DOCUMENTS,
    docs: [{ _id: 0, r: [{ p: 'x', s: 10 }, { p: 'y', s: 5 }] }, { _id: 1, r: [{ p: 'x', s: 5 }, { p: 'y', s: 10 }] }],
    filter: { r: { $elemMatch: { p: 'x', s: { $gte: 8 } } } },
    expect: [0]
  },
  {
    name: 'object form with $or: one element meets a branch',
    manual: `${E}#array-of-embedded-documents`,
    docs: [
      { _id: 0, r: [{ p: 'x', s: 1 }] },
      { _id: 1, r: [{ p: 'y', s: 5 }] },
      { _id: 2, r: [{ p: 'z', s: 1 }] },
      { _id: 3, r: ['x'] }
    ],
    filter: { r: { $elemMatch: { $or: [{ p: 'x' }, { s: { $gt: 4 } }] } } },
    expect: [0, 1]
  },
  {
    name: 'object form with $and: one element meets every branch',
    manual: `${E}#array-of-embedded-documents`,
    docs: [{ _id: 0, r: [{ p: 'x', s: 1 }, { p: 'y', s: 9 }] }, { _id: 1, r: [{ p: 'x', s: 9 }] }],
    filter: { r: { $elemMatch: { $and: [{ p: 'x' }, { s: { $gt: 4 } }] } } },
    expect: [1]
  },
  {
    name: 'object form with $nor: an element meets no branch',
    manual: `${E}#array-of-embedded-documents`,
    docs: [{ _id: 0, r: [{ p: 'x' }] }, { _id: 1, r: [{ p: 'x' }, { p: 'y' }] }, { _id: 2, r: ['y'] }],
    filter: { r: { $elemMatch: { $nor: [{ p: 'x' }] } } },
    expect: [1]
  },
  {
    name: 'object form never matches scalar elements, even when a branch names no field',
    manual: `${E}#array-of-embedded-documents`,
    values: [['a'], [{ a: 1 }], [1, 2]],
    filter: { v: { $elemMatch: { $or: [{ a: 1 }, { a: { $exists: false } }] } } },
    expect: [1]
  },
  {
    name: 'the first field decides: a field name first is the object form',
    manual: `${E}#array-of-embedded-documents`,
    docs: [{ _id: 0, r: [{ p: 'x', q: 1 }] }, { _id: 1, r: [{ p: 'x', q: 2 }] }],
    filter: { r: { $elemMatch: { p: 'x', $or: [{ q: 1 }, { q: 3 }] } } },
    expect: [0]
  },
  {
    name: 'object form with a dotted path inside the element',
    manual: ARRAY_OF_DOCUMENTS,
    docs: [{ _id: 0, r: [{ a: { b: 'x' } }] }, { _id: 1, r: [{ a: { b: 'y' } }] }],
    filter: { r: { $elemMatch: { 'a.b': 'x' } } },
    expect: [0]
  },
  {
    name: 'an empty $elemMatch matches arrays holding a document',
    manual: `${E}#array-of-embedded-documents`,
    values: [[{}], [1], [], [{ a: 1 }]],
    filter: { v: { $elemMatch: {} } },
    expect: [0, 3]
  },
  {
    name: '$elemMatch inside $all',
    manual: 'https://www.mongodb.com/docs/manual/reference/operator/query/all/#use--all-with--elemmatch',
    docs: [{ _id: 0, r: [{ s: 'M', n: 45 }, { s: 'L', n: 100 }] }, { _id: 1, r: [{ s: 'M', n: 100 }] }],
    filter: { r: { $all: [{ $elemMatch: { s: 'M', n: { $gt: 50 } } }] } },
    expect: [1]
  },
  {
    name: 'object form under a collation compares the element\'s strings by it',
    manual: `${E}#array-of-embedded-documents`,
    docs: [{ _id: 0, r: [{ p: 'X' }] }, { _id: 1, r: [{ p: 'y' }] }, { _id: 2, r: [{ p: 'x̃' }] }],
    filter: { r: { $elemMatch: { p: 'x' } } },
    collation: { locale: 'en', strength: 2 },
    expect: [0]
  },
  {
    name: 'value form under a collation: a range in the collation\'s order',
    manual: `${E}#element-match`,
    values: [['B'], ['b'], ['C'], ['a']],
    filter: { v: { $elemMatch: { $gt: 'a', $lt: 'c' } } },
    collation: { locale: 'en', strength: 1 },
    expect: [0, 1]
  }
]
