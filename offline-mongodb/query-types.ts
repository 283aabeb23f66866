// `$type`: a value's BSON type number, and the aliases the manual lists
// (https://www.mongodb.com/docs/manual/reference/operator/query/type/).
import { BSONRegExp, Decimal128, Double, Int32, Long } from 'bson'
import { Pcre2Pattern } from './regex.js'
import { CommandError } from './errors.js'

const TYPE_ALIASES: Record<string, number> = {
  double: 1,
  string: 2,
  object: 3,
  array: 4,
  binData: 5,
  objectId: 7,
  bool: 8,
  date: 9,
  null: 10,
  regex: 11,
  int: 16,
  timestamp: 17,
  long: 18,
  decimal: 19,
  minKey: -1,
  maxKey: 127
}

function bsonTypeNumber (value: unknown): number {
  if (value === null) return 10
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= 0x7fffffff ? 16 : 1
  if (typeof value === 'string') return 2
  if (typeof value === 'boolean') return 8
  if (Array.isArray(value)) return 4
  if (value instanceof Date) return 9
  if (value instanceof Int32) return 16
  if (value instanceof Double) return 1
  if (value instanceof Decimal128) return 19
  if (value instanceof RegExp || value instanceof BSONRegExp || value instanceof Pcre2Pattern) return 11
  const bsontype = (value as { _bsontype?: string })._bsontype
  const byBsonType: Record<string, number> = {
    ObjectId: 7, Binary: 5, Timestamp: 17, Long: 18, MinKey: -1, MaxKey: 127, Code: 13
  }
  if (bsontype !== undefined && bsontype in byBsonType) return byBsonType[bsontype] as number
  return value instanceof Long ? 18 : 3
}

/** Whether a candidate (or, unless taken whole, one of an array candidate's elements) has one of the types. */
export function typeMatcher (operand: unknown): (candidates: unknown[], whole?: boolean) => boolean {
  const wanted = (Array.isArray(operand) ? operand : [operand]).map((t): number | 'number' => {
    if (t === 'number') return 'number'
    if (typeof t === 'string' && t in TYPE_ALIASES) return TYPE_ALIASES[t] as number
    if (typeof t === 'number') return t
    throw new CommandError(2, 'BadValue', `Unknown type name alias: ${String(t)}`)
  })
  const hasType = (value: unknown): boolean => {
    if (value === undefined) return false
    const type = bsonTypeNumber(value)
    return wanted.some((w) => w === 'number' ? [1, 16, 18, 19].includes(type) : w === type)
  }
  return (candidates, whole) => candidates.some((c) => hasType(c) || (!whole && Array.isArray(c) && c.some(hasType)))
}

const NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(TYPE_ALIASES).map(([name, number]) => [number, name])
)

/** The name `$type` (aggregation) gives a value's BSON type: "objectId", "date", "int"… */
export function bsonTypeName (value: unknown): string {
  const number = bsonTypeNumber(value)
  return number === 13 ? 'javascript' : NAMES[number] ?? 'object'
}
