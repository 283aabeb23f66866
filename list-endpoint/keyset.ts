// Keyset pagination: the documents after a given one in a sort, as a MongoDB filter, so that a
// page after a cursor costs what the first page costs (an index range, never `skip`). Why each
// range is "$gt v or a later bracket", and how arrays in sort keys are kept out: docs/paging.md.
import {
  BSONRegExp, Binary, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, type CollationOptions,
  type Document
} from 'mongodb'
import type { SortSpec } from '../list-query/compile-sort.js'

/** BSON type numbers, bracket by bracket, in MongoDB's sort order. */
const BRACKETS: number[][] = [[-1], [10, 6], [1, 16, 18, 19], [2, 14], [3], [4], [5], [7], [8], [9], [17], [11], [127]]
const NULL_BRACKET = 1
const ARRAY_BRACKET = 5
/** An empty array's place: after MinKey, before null. */
const EMPTY = 0.5

function bracketOf (value: unknown): number {
  if (value === null || value === undefined) return NULL_BRACKET
  if (typeof value === 'number' || value instanceof Int32 || value instanceof Double || value instanceof Long ||
    value instanceof Decimal128 || typeof value === 'bigint') return 2
  if (typeof value === 'string') return 3
  if (typeof value === 'boolean') return 8
  if (value instanceof Date) return 9
  if (value instanceof ObjectId) return 7
  if (value instanceof Binary) return 6
  if (Array.isArray(value)) return value.length === 0 ? EMPTY : ARRAY_BRACKET
  if (value instanceof Timestamp) return 10
  if (value instanceof BSONRegExp || value instanceof RegExp) return 11
  if (value instanceof MinKey) return 0
  if (value instanceof MaxKey) return 12
  return 4
}

const typesOf = (brackets: number[][]): number[] => brackets.flat()

type StringOrder = (a: string, b: string) => number

/** Strings in the collation's order (Node's ICU, as MongoDB's), or by code point without one. */
function stringOrder (collation: CollationOptions | undefined): StringOrder {
  if (collation === undefined) return (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))
  const sensitivity = collation.strength === 1 ? 'base' : collation.strength === 2 ? 'accent' : 'variant'
  const caseFirst = collation.caseFirst === 'upper' || collation.caseFirst === 'lower' ? collation.caseFirst : 'false'
  const collator = new Intl.Collator(
    collation.locale.replace('@collation=', '-u-co-').replace(/_/g, '-'),
    { sensitivity, caseFirst, numeric: collation.numericOrdering === true }
  )
  return (a, b) => collator.compare(a, b)
}

/**
 * Two elements in the sort order: their brackets, then their values (an array element or a
 * document by its place only).
 */
function compareElements (a: unknown, b: unknown, strings: StringOrder): number {
  const ba = bracketOf(a)
  const bb = bracketOf(b)
  if (ba !== bb) return ba - bb
  if (typeof a === 'string') return strings(a, b as string)
  if (ba === 2) return Number(a) - Number(b)
  if (a instanceof Date) return a.getTime() - (b as Date).getTime()
  if (a instanceof ObjectId) {
    return a.toHexString() < (b as ObjectId).toHexString() ? -1 : a.equals(b as ObjectId) ? 0 : 1
  }
  if (typeof a === 'boolean') return Number(a) - Number(b)
  return 0
}

/**
 * The value a stored value sorts by: an array's smallest element ascending, its largest
 * descending; an empty array stays empty.
 */
function sortKeyOf (value: unknown, direction: 1 | -1, strings: () => StringOrder): unknown {
  if (!Array.isArray(value) || value.length === 0) return value
  return value.reduce((best: unknown, element: unknown) =>
    compareElements(element, best, strings()) * direction < 0 ? element : best)
}

/** Elements of brackets `from` to `to` (inclusive), as an $elemMatch; undefined when none. */
function elementsIn (key: string, from: number, to: number): Document | undefined {
  const types = typesOf(BRACKETS.slice(Math.max(0, from), to + 1))
  return types.length === 0 ? undefined : { [key]: { $elemMatch: { $type: types } } }
}

/** Arrays with an element at or before `value` (`strictly`: before it) in `direction`. */
function elementsNotAfter (key: string, value: unknown, direction: 1 | -1, strictly: boolean): Document[] {
  const bracket = bracketOf(value)
  const parts: Document[] = []
  const others = direction === 1 ? elementsIn(key, 0, bracket - 1) : elementsIn(key, bracket + 1, BRACKETS.length - 1)
  if (others !== undefined) parts.push(others)
  if (bracket === NULL_BRACKET) {
    if (!strictly) parts.push(elementsIn(key, NULL_BRACKET, NULL_BRACKET) as Document)
  } else {
    parts.push({
      [key]: { $elemMatch: { [direction === 1 ? (strictly ? '$lt' : '$lte') : (strictly ? '$gt' : '$gte')]: value } }
    })
  }
  return parts
}

// Each predicate is a list of alternatives, each a list of conjuncts, so that the whole filter is
// one $or of ranges an index reads (as for scalars alone), each with its filters beside it.
type Conjuncts = Document[]

/**
 * Every document whose key sorts as `value`: the equality an index reads, which also matches an
 * array holding the value, but no array with an element that sorts before it ($elemMatch
 * matches arrays only, so scalars pass).
 */
function equal (key: string, value: unknown, direction: 1 | -1): Conjuncts {
  const bracket = bracketOf(value)
  if (key === '_id') return [{ _id: { $eq: value } }]
  if (bracket === EMPTY) return [{ [key]: [] }, { [key]: { $size: 0 } }]
  const matches = bracket === NULL_BRACKET ? { [key]: null } : { [key]: { $eq: value } }
  const before = elementsNotAfter(key, value, direction, true)
  return before.length === 0 ? [matches] : [matches, { $nor: before }]
}

/**
 * The ranges of values that sort strictly after `value` in `direction`, as an index reads them
 * (an array matches when one element does).
 */
function ranges (key: string, value: unknown, direction: 1 | -1): Document[] {
  const bracket = bracketOf(value)
  const parts: Document[] = []
  if (bracket !== NULL_BRACKET) parts.push({ [key]: { [direction === 1 ? '$gt' : '$lt']: value } })
  if (direction === 1) {
    const later = typesOf(BRACKETS.slice(bracket + 1))
    if (later.length > 0) parts.push({ [key]: { $type: later } })
  } else {
    if (bracket > NULL_BRACKET) parts.push({ [key]: null })
    const earlier = typesOf(BRACKETS.slice(0, bracket).filter((_, i) => i !== NULL_BRACKET))
    if (earlier.length > 0) parts.push({ [key]: { $type: earlier } })
  }
  return parts
}

/** Documents whose key sorts strictly after `value` in `direction`: none when there are no alternatives. */
function after (key: string, value: unknown, direction: 1 | -1): Conjuncts[] {
  // `_id` is never an array, nor missing: its ranges alone.
  if (key === '_id') return ranges(key, value, direction).map((part) => [part])
  const bracket = bracketOf(value)
  // After an empty array: ascending, everything but the empty arrays (off-schema: no index range); descending, nothing.
  if (bracket === EMPTY) return direction === 1 ? [[{ [key]: { $not: { $size: 0 } } }]] : []
  // An array is after the value when none of its elements sorts at or before it; an empty one never is, but descending.
  const arrays = { $nor: [...elementsNotAfter(key, value, direction, false), { [key]: { $size: 0 } }] }
  const alternatives = ranges(key, value, direction).map((part) => [part, arrays])
  if (direction === -1) alternatives.push([{ [key]: [] }, { [key]: { $size: 0 } }])
  return alternatives
}

/**
 * The documents that come after the one whose sort keys hold `values`, in `sort`; strings of
 * arrays compared in `collation` (the query's, absent for binary order).
 */
export function keysetFilter (sort: SortSpec, values: unknown[], collation?: CollationOptions): Document {
  const keys = Object.entries(sort) as Array<[string, 1 | -1]>
  // A collator only for an array's strings, which only off-schema documents hold.
  let order: StringOrder | undefined
  const strings = (): StringOrder => (order ??= stringOrder(collation))
  const keyed = keys.map(([, direction], i) => sortKeyOf(values[i], direction, strings))
  const branches: Document[] = []
  for (let i = 0; i < keys.length; i++) {
    const [key, direction] = keys[i] as [string, 1 | -1]
    const equals = keys.slice(0, i).flatMap(([k, d], j) => equal(k, keyed[j], d))
    for (const alternative of after(key, keyed[i], direction)) {
      const conjuncts = [...equals, ...alternative]
      branches.push(conjuncts.length === 1 ? conjuncts[0] as Document : { $and: conjuncts })
    }
  }
  return branches.length === 1 ? branches[0] as Document : { $or: branches }
}

/** The value at a dotted path of a document (undefined when missing). */
export function valueAt (doc: Document, path: string): unknown {
  let value: unknown = doc
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined
    value = (value as Document)[part]
  }
  return value
}
