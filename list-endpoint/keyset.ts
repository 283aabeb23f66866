// Keyset pagination: the documents after a given one in a sort, as a MongoDB filter, so that a
// page after a cursor costs what the first page costs (an index range, never `skip`).
//
// MongoDB sorts across BSON types in a fixed order of brackets, while $gt/$lt only match
// within the operand's bracket (manual: "Comparison/Sort Order"). "After v" is therefore
// "$gt v in v's bracket, or any value of a later bracket" (and the mirror image descending);
// a missing field sorts as null. The whole predicate is the expanded form
// (k1 > v1) OR (k1 = v1 AND k2 > v2) OR …, ending with the `_id` tie-breaker.
import { BSONRegExp, Binary, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, type Document } from 'mongodb'
import type { SortSpec } from '../list-query/compile-sort.js'

/** BSON type numbers, bracket by bracket, in MongoDB's sort order. */
const BRACKETS: number[][] = [[-1], [10, 6], [1, 16, 18, 19], [2, 14], [3], [4], [5], [7], [8], [9], [17], [11], [127]]
const NULL_BRACKET = 1

function bracketOf (value: unknown): number {
  if (value === null || value === undefined) return NULL_BRACKET
  if (typeof value === 'number' || value instanceof Int32 || value instanceof Double || value instanceof Long || value instanceof Decimal128 || typeof value === 'bigint') return 2
  if (typeof value === 'string') return 3
  if (typeof value === 'boolean') return 8
  if (value instanceof Date) return 9
  if (value instanceof ObjectId) return 7
  if (value instanceof Binary) return 6
  if (Array.isArray(value)) return 5
  if (value instanceof Timestamp) return 10
  if (value instanceof BSONRegExp || value instanceof RegExp) return 11
  if (value instanceof MinKey) return 0
  if (value instanceof MaxKey) return 12
  return 4
}

const typesOf = (brackets: number[][]): number[] => brackets.flat()

function equal (key: string, value: unknown): Document {
  return bracketOf(value) === NULL_BRACKET ? { [key]: null } : { [key]: { $eq: value } }
}

/** The values that sort strictly after `value` in direction `direction`; undefined when none can. */
function after (key: string, value: unknown, direction: 1 | -1): Document | undefined {
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
  return parts.length === 0 ? undefined : parts.length === 1 ? parts[0] : { $or: parts }
}

/** The documents that come after the one whose sort keys hold `values`, in `sort`. */
export function keysetFilter (sort: SortSpec, values: unknown[]): Document {
  const keys = Object.entries(sort)
  const branches: Document[] = []
  for (let i = 0; i < keys.length; i++) {
    const [key, direction] = keys[i] as [string, 1 | -1]
    const beyond = after(key, values[i], direction)
    if (beyond === undefined) continue
    const equals = keys.slice(0, i).map(([k], j) => equal(k, values[j]))
    branches.push(equals.length === 0 ? beyond : { $and: [...equals, beyond] })
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
