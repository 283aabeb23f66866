// MongoDB's comparison/sort order for BSON values, which stock JavaScript comparisons
// (and mingo's defaults) do not follow: https://www.mongodb.com/docs/manual/reference/bson-type-comparison-order/
import { BSONRegExp, Binary, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp } from 'bson'

/** Canonical type ranks, lowest first, as listed in the manual. Missing sorts as null. */
export const TypeRank = {
  minKey: 1,
  null: 2,
  number: 3,
  string: 4,
  object: 5,
  array: 6,
  binData: 7,
  objectId: 8,
  boolean: 9,
  date: 10,
  timestamp: 11,
  regex: 12,
  maxKey: 15
} as const

export function typeRank (value: unknown): number {
  if (value === undefined || value === null) return TypeRank.null
  switch (typeof value) {
    case 'number': case 'bigint': return TypeRank.number
    case 'string': return TypeRank.string
    case 'boolean': return TypeRank.boolean
  }
  if (Array.isArray(value)) return TypeRank.array
  if (value instanceof Date) return TypeRank.date
  if (value instanceof ObjectId) return TypeRank.objectId
  if (isNumeric(value)) return TypeRank.number
  if (value instanceof Binary) return TypeRank.binData
  if (value instanceof Timestamp) return TypeRank.timestamp
  if (value instanceof BSONRegExp || value instanceof RegExp) return TypeRank.regex
  if (value instanceof MinKey) return TypeRank.minKey
  if (value instanceof MaxKey) return TypeRank.maxKey
  return TypeRank.object
}

function isNumeric (value: object): boolean {
  // Timestamp extends Long in js-bson, so it is ruled out first.
  return !(value instanceof Timestamp) &&
    (value instanceof Long || value instanceof Decimal128 || value instanceof Double || value instanceof Int32)
}

/** A plain embedded document (not an array, not a BSON value class). */
export function isDocument (value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

type NumericValue = number | bigint | Long | Decimal128 | Double | Int32

function compareNumbers (a: NumericValue, b: NumericValue): number {
  const x = toExact(a)
  const y = toExact(b)
  if (typeof x === 'number' && Number.isNaN(x)) return typeof y === 'number' && Number.isNaN(y) ? 0 : -1
  if (typeof y === 'number' && Number.isNaN(y)) return 1
  if (typeof x === 'bigint' && typeof y === 'bigint') return x < y ? -1 : x > y ? 1 : 0
  if (typeof x === 'bigint' && typeof y === 'number' && Number.isInteger(y)) return cmpBig(x, BigInt(y))
  if (typeof y === 'bigint' && typeof x === 'number' && Number.isInteger(x)) return cmpBig(BigInt(x), y)
  const nx = Number(x)
  const ny = Number(y)
  return nx < ny ? -1 : nx > ny ? 1 : 0
}

function cmpBig (x: bigint, y: bigint): number {
  return x < y ? -1 : x > y ? 1 : 0
}

/** Longs become bigint so that values beyond 2^53 keep their order; Decimal128 is approximated as a double. */
function toExact (value: NumericValue): number | bigint {
  if (typeof value === 'number' || typeof value === 'bigint') return value
  if (value instanceof Long) return value.toBigInt()
  if (value instanceof Decimal128) {
    const text = value.toString()
    return Number(text)
  }
  return value.valueOf()
}

/** Strings compare by UTF-8 bytes, which is code-point order (not UTF-16 unit order). */
export function compareStrings (a: string, b: string): number {
  if (a === b) return 0
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i) as number
    const y = b.codePointAt(i) as number
    if (x !== y) return x < y ? -1 : 1
    if (x > 0xffff) i++
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

function compareBytes (a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    if (a[i] !== b[i]) return (a[i] as number) < (b[i] as number) ? -1 : 1
  }
  return Math.sign(a.length - b.length)
}

/**
 * How strings compare: by code point (binary) unless a collation gives its order. Only string
 * values follow it; field names, numbers and the other types never do (manual: "Collation").
 */
export type StringOrder = (a: string, b: string) => number

function compareDocuments (a: Record<string, unknown>, b: Record<string, unknown>, strings: StringOrder): number {
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  const length = Math.min(ka.length, kb.length)
  for (let i = 0; i < length; i++) {
    const va = a[ka[i] as string]
    const vb = b[kb[i] as string]
    const byType = typeRank(va) - typeRank(vb)
    if (byType !== 0) return byType < 0 ? -1 : 1
    const byName = compareStrings(ka[i] as string, kb[i] as string)
    if (byName !== 0) return byName
    const byValue = compareValues(va, vb, strings)
    if (byValue !== 0) return byValue
  }
  return ka.length < kb.length ? -1 : ka.length > kb.length ? 1 : 0
}

function compareArrays (a: unknown[], b: unknown[], strings: StringOrder): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const c = compareValues(a[i], b[i], strings)
    if (c !== 0) return c
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0
}

/** Total order over BSON values: type rank first, then value within the type; strings in `strings`' order. */
export function compareValues (a: unknown, b: unknown, strings: StringOrder = compareStrings): number {
  const ra = typeRank(a)
  const rb = typeRank(b)
  if (ra !== rb) return ra < rb ? -1 : 1
  switch (ra) {
    case TypeRank.null: case TypeRank.minKey: case TypeRank.maxKey: return 0
    case TypeRank.number: return compareNumbers(a as NumericValue, b as NumericValue)
    case TypeRank.string: return strings(a as string, b as string)
    case TypeRank.boolean: return a === b ? 0 : a === false ? -1 : 1
    case TypeRank.date: return Math.sign((a as Date).getTime() - (b as Date).getTime())
    case TypeRank.objectId: return compareBytes((a as ObjectId).id, (b as ObjectId).id)
    case TypeRank.binData: return compareBytes((a as Binary).buffer, (b as Binary).buffer)
    case TypeRank.timestamp: return compareNumbers((a as Timestamp).toBigInt(), (b as Timestamp).toBigInt())
    case TypeRank.array: return compareArrays(a as unknown[], b as unknown[], strings)
    case TypeRank.regex: return compareStrings(String(a), String(b))
    default: return compareDocuments(a as Record<string, unknown>, b as Record<string, unknown>, strings)
  }
}

export function valuesEqual (a: unknown, b: unknown, strings?: StringOrder): boolean {
  return a === b || compareValues(a, b, strings) === 0
}
