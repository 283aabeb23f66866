// A `collation` document read as mongod 7/8 reads it: the IDL struct `Collation`
// (src/mongo/db/basic_types.idl) parsed with the IDL's errors (src/mongo/idl/idl_parser.cpp),
// then CollatorFactoryICU::makeFromBSON (src/mongo/db/query/collation/collator_factory_icu.cpp)
// fills in the locale's defaults and checks the combination.
// Manual: https://www.mongodb.com/docs/manual/reference/collation/
import { Decimal128, Double, Int32, Long } from 'bson'
import { isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import { findLocale, suggestLocale } from './collation-locales.js'

/** The full spec, every field filled in, in the order mongod lists it (listIndexes). */
export interface CollationSpec {
  locale: string
  caseLevel: boolean
  caseFirst: 'upper' | 'lower' | 'off'
  strength: 1 | 2 | 3 | 4 | 5
  numericOrdering: boolean
  alternate: 'non-ignorable' | 'shifted'
  maxVariable: 'punct' | 'space'
  normalization: boolean
  backwards: boolean
  version: string
}

/** The ICU version mongod 7/8 report and require in `version` (collation.js expects "57.1"). */
export const COLLATOR_VERSION = '57.1'

const ENUMS: Record<string, readonly string[]> = {
  caseFirst: ['upper', 'lower', 'off'],
  alternate: ['non-ignorable', 'shifted'],
  maxVariable: ['punct', 'space']
}
const BOOLEANS = new Set(['caseLevel', 'numericOrdering', 'normalization'])
const STRINGS = new Set(['locale', 'version', ...Object.keys(ENUMS)])

/** mongod's name of a value's BSON type (typeName() in bsontypes.cpp). */
export function bsonTypeName (value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'bool'
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= 0x7fffffff ? 'int' : 'double'
  if (typeof value === 'bigint') return 'long'
  if (Array.isArray(value)) return 'array'
  if (value instanceof Date) return 'date'
  const names: Record<string, string> = {
    Int32: 'int',
    Double: 'double',
    Long: 'long',
    Decimal128: 'decimal',
    ObjectId: 'objectId',
    Binary: 'binData',
    BSONRegExp: 'regex',
    Timestamp: 'timestamp',
    MinKey: 'minKey',
    MaxKey: 'maxKey',
    Code: 'javascript',
    BSONSymbol: 'symbol'
  }
  const bsontype = (value as { _bsontype?: string })._bsontype
  return bsontype !== undefined && bsontype in names ? names[bsontype] as string : 'object'
}

/** A document as mongod prints one in an error (BSONObj::toString): `{ locale: "fr", strength: 1 }`. */
export function printBson (value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (Array.isArray(value)) return value.length === 0 ? '[]' : `[ ${value.map(printBson).join(', ')} ]`
  if (isDocument(value)) {
    const fields = Object.entries(value).map(([key, inner]) => `${key}: ${printBson(inner)}`)
    return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`
  }
  return String(value)
}

/** The IDL's `safeInt` (BSONElement::safeNumberInt): truncated toward zero, clamped to int32, NaN as 0. */
function safeInt (value: unknown): number | undefined {
  let n: number
  if (typeof value === 'number') n = value
  else if (value instanceof Int32 || value instanceof Double) n = value.valueOf()
  else if (value instanceof Long) n = value.toNumber()
  else if (typeof value === 'bigint') n = Number(value)
  else if (value instanceof Decimal128) n = Number(value.toString())
  else return undefined
  if (Number.isNaN(n)) return 0
  return Math.max(-0x80000000, Math.min(0x7fffffff, Math.trunc(n)))
}

type Given = Partial<Record<keyof CollationSpec, unknown>>

/** The IDL pass: types, unknown fields, the strength validator, the required locale, in field order. */
function readFields (doc: Record<string, unknown>): Given {
  const given: Given = {}
  for (const [key, value] of Object.entries(doc)) {
    const wrongType = (expected: string): CommandError =>
      new CommandError(
        14, 'TypeMismatch',
        `BSON field 'collation.${key}' is the wrong type '${bsonTypeName(value)}', expected ${expected}`
      )
    // The IDL skips a null or undefined value of a typed field, as if the field were not given.
    const skipped = value === null || value === undefined
    if (key === 'backwards') {
      // OptionalBool::parseFromBSON (src/mongo/db/basic_types.h) takes a bool and nothing else.
      if (typeof value !== 'boolean') {
        throw new CommandError(
          14, 'TypeMismatch', `Field 'backwards' should be a boolean value, but found: ${bsonTypeName(value)}`
        )
      }
      given.backwards = value
    } else if (BOOLEANS.has(key)) {
      if (!skipped && typeof value !== 'boolean') throw wrongType("type 'bool'")
      given[key as keyof CollationSpec] = skipped ? null : value
    } else if (STRINGS.has(key)) {
      if (!skipped && typeof value !== 'string') throw wrongType("type 'string'")
      if (typeof value === 'string' && key in ENUMS && !(ENUMS[key] as readonly string[]).includes(value)) {
        throw new CommandError(
          2, 'BadValue', `Enumeration value '${value}' for field 'collation.${key}' is not a valid value.`
        )
      }
      if (!skipped) given[key as keyof CollationSpec] = value
      else if (key !== 'locale' && key !== 'version') given[key as keyof CollationSpec] = null
    } else if (key === 'strength') {
      if (skipped) {
        given.strength = null
        continue
      }
      const n = safeInt(value)
      if (n === undefined) throw wrongType("types '[long, int, decimal, double]'")
      // The generated validator names the field alone (throwComparisonError, src/mongo/idl/idl_parser.h).
      if (n < 0) {
        throw new CommandError(51024, 'Location51024', `BSON field 'strength' value must be >= 0, actual value '${n}'`)
      }
      if (n > 5) {
        throw new CommandError(51024, 'Location51024', `BSON field 'strength' value must be <= 5, actual value '${n}'`)
      }
      given.strength = n
    } else {
      throw new CommandError(40415, 'Location40415', `BSON field 'collation.${key}' is an unknown field.`)
    }
  }
  if (typeof given.locale !== 'string') {
    throw new CommandError(40414, 'Location40414', "BSON field 'collation.locale' is missing but a required field")
  }
  return given
}

/** A field the document gave, a null for "given as null" (the IDL default then applies), else the locale's. */
function pick<T> (given: unknown, idlDefault: T, localeDefault: T): T {
  if (given === undefined) return localeDefault
  return given === null ? idlDefault : given as T
}

/**
 * The full spec of a collation document; undefined for `{locale: "simple"}` (binary comparison).
 * mongod 7/8 return the simple collator before looking at any other field, once the IDL has
 * accepted their types (collator_factory_icu.cpp, makeFromBSON).
 */
export function readCollation (doc: Record<string, unknown>): CollationSpec | undefined {
  const given = readFields(doc)
  const locale = given.locale as string
  const shown = printBson(doc)
  if (locale.includes('\0')) {
    throw new CommandError(2, 'BadValue', `Field 'locale' cannot contain null byte. Collation spec: ${shown}`)
  }
  if (locale === 'simple') return undefined
  if (locale === '') throw new CommandError(2, 'BadValue', `Field 'locale' cannot be the empty string in: ${shown}`)
  const found = findLocale(locale)
  if (found === undefined) {
    const suggestion = suggestLocale(locale)
    throw new CommandError(
      2, 'BadValue',
      `Field 'locale' is invalid in: ${shown}${suggestion === undefined ? '' : `. Did you mean '${suggestion}'?`}`
    )
  }
  const defaults = {
    ...found.entry.defaults,
    ...(found.variant === undefined ? {} : (found.entry.variants?.[found.variant] || undefined)?.defaults)
  }
  if (given.strength === 0) {
    throw new CommandError(2, 'BadValue', "Enumeration value '0' for field 'collation.strength' is not a valid value.")
  }
  if (given.version !== undefined && given.version !== COLLATOR_VERSION) {
    throw new CommandError(
      161, 'IncompatibleCollationVersion',
      `Requested collation version ${String(given.version)} but the only available collator version was ` +
        `${COLLATOR_VERSION}. Requested collation spec: ${shown}`
    )
  }
  const spec: CollationSpec = {
    locale,
    caseLevel: pick(given.caseLevel, false, false),
    caseFirst: pick(given.caseFirst, 'off', defaults.caseFirst ?? 'off'),
    strength: pick(given.strength, 3, 3) as CollationSpec['strength'],
    numericOrdering: pick(given.numericOrdering, false, false),
    alternate: pick(given.alternate, 'non-ignorable', defaults.alternate ?? 'non-ignorable'),
    maxVariable: pick(given.maxVariable, 'punct', 'punct'),
    normalization: pick(given.normalization, false, defaults.normalization ?? false),
    backwards: pick(given.backwards, false, defaults.backwards ?? false),
    version: COLLATOR_VERSION
  }
  // validateCollationSpec: checked on the filled-in spec, so a locale's own defaults count too.
  if (spec.backwards && spec.strength === 1) {
    throw new CommandError(2, 'BadValue', `'backwards' is invalid with 'strength' of 1 in: ${shown}`)
  }
  if (spec.caseFirst !== 'off' && !spec.caseLevel && spec.strength < 3) {
    throw new CommandError(
      2, 'BadValue', `'caseFirst' is invalid unless 'caseLevel' is on or 'strength' is greater than 2 in: ${shown}`
    )
  }
  return spec
}

/**
 * The `collation` option of a command: undefined when absent, empty (query_request_helper takes
 * an empty document as none given) or simple. `field` names it in a type error (`find.collation`).
 */
export function collationOption (value: unknown, field: string): CollationSpec | undefined {
  if (value === undefined) return undefined
  if (!isDocument(value)) {
    throw new CommandError(
      14, 'TypeMismatch', `BSON field '${field}' is the wrong type '${bsonTypeName(value)}', expected type 'object'`
    )
  }
  if (Object.keys(value).length === 0) return undefined
  return readCollation(value)
}
