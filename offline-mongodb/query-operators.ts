// MongoDB's query semantics, plugged into mingo as its query operators. Stock mingo
// differs from MongoDB on type bracketing, $all against scalars, Long/Decimal128 numbers,
// $type and embedded-document equality; every operator the driver can send is defined here.
import { BSONRegExp, Decimal128, Double, Int32, Long } from 'bson'
import { Context } from 'mingo'
import { $and, $nor, $or } from 'mingo/operators/query/logical'
import { Query } from 'mingo/query'
import type { Options } from 'mingo/types'
import { compareValues, isDocument, typeRank, valuesEqual } from './bson-order.js'
import { expandArrays, valuesAtPath } from './field-paths.js'
import { Pcre2Pattern, compilePattern, fromBSONRegExp } from './regex.js'
import { CommandError } from './errors.js'

type Candidates = unknown[]
type Predicate = (candidates: Candidates) => boolean
type PredicateBuilder = (operand: unknown, options: Options) => Predicate

function equalsAny (candidates: Candidates, operand: unknown): boolean {
  for (const candidate of candidates) {
    if (candidate === undefined) {
      if (operand === null) return true
      continue
    }
    if (valuesEqual(candidate, operand)) return true
    if (Array.isArray(candidate) && candidate.some((element) => valuesEqual(element, operand))) return true
  }
  return false
}

function matchesRegex (candidates: Candidates, re: Pcre2Pattern): boolean {
  return expandArrays(candidates).some((value) => typeof value === 'string' && re.test(value))
}

/** Range operators only compare values of the same type bracket as the operand. */
function comparison (accept: (order: number) => boolean): PredicateBuilder {
  return (operand) => {
    const rank = typeRank(operand)
    const pool = Array.isArray(operand) ? (c: Candidates) => c : expandArrays
    return (candidates) => pool(candidates).some((value) => {
      if (value === undefined) return operand === null && accept(0)
      return typeRank(value) === rank && accept(compareValues(value, operand))
    })
  }
}

function inList (operand: unknown): Predicate {
  if (!Array.isArray(operand)) throw new CommandError(2, 'BadValue', '$in needs an array')
  const tests = operand.map((value): Predicate => value instanceof Pcre2Pattern
    ? (c) => matchesRegex(c, value)
    : (c) => equalsAny(c, value))
  return (candidates) => tests.some((test) => test(candidates))
}

function regexPredicate (operand: unknown): Predicate {
  if (!(operand instanceof Pcre2Pattern)) throw new CommandError(2, 'BadValue', '$regex has to be a string')
  return (c) => matchesRegex(c, operand)
}

const TYPE_ALIASES: Record<string, number> = {
  double: 1, string: 2, object: 3, array: 4, binData: 5, objectId: 7, bool: 8, date: 9, null: 10, regex: 11, int: 16, timestamp: 17, long: 18, decimal: 19, minKey: -1, maxKey: 127
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
  const byBsonType: Record<string, number> = { ObjectId: 7, Binary: 5, Timestamp: 17, Long: 18, MinKey: -1, MaxKey: 127, Code: 13 }
  if (bsontype !== undefined && bsontype in byBsonType) return byBsonType[bsontype] as number
  return value instanceof Long ? 18 : 3
}

function typeMatcher (operand: unknown): Predicate {
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
  return (candidates) => candidates.some((c) => hasType(c) || (Array.isArray(c) && c.some(hasType)))
}

function elemMatch (operand: unknown, options: Options): Predicate {
  if (!isDocument(operand)) throw new CommandError(2, 'BadValue', '$elemMatch needs an Object')
  const keys = Object.keys(operand)
  const onValues = keys.length > 0 && keys.every((k) => k.startsWith('$') && !['$and', '$or', '$nor'].includes(k))
  const query = new Query(onValues ? { value: operand } : operand, options)
  const test = onValues ? (e: unknown) => query.test({ value: e }) : (e: unknown) => isDocument(e) && query.test(e)
  return (candidates) => candidates.some((c) => Array.isArray(c) && c.some(test))
}

function expressionPredicate (expression: unknown, options: Options): Predicate {
  if (expression instanceof Pcre2Pattern) return (c) => matchesRegex(c, expression)
  if (!isDocument(expression)) throw new CommandError(2, 'BadValue', '$not needs a regex or a document')
  const parts = Object.entries(expression).filter(([op]) => op !== '$options')
  if (parts.length === 0) throw new CommandError(2, 'BadValue', '$not cannot be empty')
  const tests = parts.map(([op, operand]) => {
    const build = PREDICATES[op]
    if (build === undefined) throw new CommandError(2, 'BadValue', `unknown operator: ${op}`)
    return build(operand, options)
  })
  return (candidates) => tests.every((test) => test(candidates))
}

const PREDICATES: Record<string, PredicateBuilder> = {
  $eq: (operand) => (c) => equalsAny(c, operand),
  $ne: (operand) => (c) => !equalsAny(c, operand),
  $gt: comparison((order) => order > 0),
  $gte: comparison((order) => order >= 0),
  $lt: comparison((order) => order < 0),
  $lte: comparison((order) => order <= 0),
  $in: (operand) => inList(operand),
  $nin: (operand) => {
    const test = inList(operand)
    return (c) => !test(c)
  },
  $exists: (operand) => (c) => c.some((value) => value !== undefined) === Boolean(operand),
  $regex: regexPredicate,
  // `$regex`, and a regex as a field's value, after prepareFilter (mingo rewrites `$regex` itself).
  $pcre: regexPredicate,
  $all: (operand, options) => {
    if (!Array.isArray(operand)) throw new CommandError(2, 'BadValue', '$all needs an array')
    const tests = operand.map((value): Predicate => {
      if (value instanceof Pcre2Pattern) return (c) => matchesRegex(c, value)
      if (isDocument(value) && Object.keys(value)[0] === '$elemMatch') return elemMatch(value.$elemMatch, options)
      return (c) => equalsAny(c, value)
    })
    return (c) => tests.length > 0 && tests.every((test) => test(c))
  },
  $size: (operand) => {
    const size = Number(operand instanceof Long ? operand.toNumber() : operand)
    if (!Number.isInteger(size) || size < 0) throw new CommandError(2, 'BadValue', '$size needs a non-negative integer')
    return (c) => c.some((value) => Array.isArray(value) && value.length === size)
  },
  $type: (operand) => typeMatcher(operand),
  $elemMatch: elemMatch,
  $not: (operand, options) => {
    const test = expressionPredicate(operand, options)
    return (c) => !test(c)
  }
}

function asMingoOperator (build: PredicateBuilder) {
  return (selector: string, operand: unknown, options: Options) => {
    const parts = selector.split('.')
    const test = build(operand, options)
    return (doc: unknown) => test(valuesAtPath(doc, parts))
  }
}

type Logical = typeof $and

/**
 * `$and`, `$or` and `$nor` take a non-empty array of documents (mongod's MatchExpressionParser:
 * BadValue "$and/$or/$nor must be a nonempty array", "$or/$and/$nor entries need to be full
 * objects"; manual: $and, $or, $nor). Stock mingo takes `$or: []` as matching nothing and `$and: []`
 * as matching everything.
 */
function nonEmpty (logical: Logical): Logical {
  return (selector, operand, options) => {
    if (!Array.isArray(operand) || operand.length === 0) throw new CommandError(2, 'BadValue', '$and/$or/$nor must be a nonempty array')
    if (!operand.every(isDocument)) throw new CommandError(2, 'BadValue', '$or/$and/$nor entries need to be full objects')
    return logical(selector, operand, options)
  }
}

export const queryContext = Context.init({
  query: {
    ...Object.fromEntries(Object.entries(PREDICATES).map(([name, build]) => [name, asMingoOperator(build)])),
    $and: nonEmpty($and),
    $or: nonEmpty($or),
    $nor: nonEmpty($nor)
  }
})

/**
 * BSON regular expressions and `$regex`/`$options` pairs are compiled once (regex.ts), before
 * mingo sees the filter, so that every operator receives a ready Pcre2Pattern.
 */
export function prepareFilter (value: unknown): unknown {
  if (value instanceof BSONRegExp) return fromBSONRegExp(value)
  if (Array.isArray(value)) return value.map(prepareFilter)
  if (!isDocument(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$options') continue
    if (key === '$regex') {
      const options = typeof value.$options === 'string' ? value.$options : ''
      out.$pcre = inner instanceof BSONRegExp
        ? compilePattern(inner.pattern, options || inner.options)
        : typeof inner === 'string' ? compilePattern(inner, options) : inner
      continue
    }
    // A regex as a field's value means "matches": mingo would read the pattern object as a document.
    out[key] = inner instanceof BSONRegExp && !key.startsWith('$') ? { $pcre: fromBSONRegExp(inner) } : prepareFilter(inner)
  }
  if ('$options' in value && !('$regex' in value)) throw new CommandError(2, 'BadValue', '$options needs a $regex')
  return out
}

export type DocumentTest = (doc: Record<string, unknown>) => boolean

/** Compiles a MongoDB filter into a document predicate, with MongoDB's error codes. */
export function compileFilter (filter: unknown): DocumentTest {
  if (filter === undefined || filter === null) return () => true
  if (!isDocument(filter)) throw new CommandError(2, 'BadValue', 'filter must be an object')
  try {
    const query = new Query(prepareFilter(filter) as Record<string, unknown>, { context: queryContext, scriptEnabled: false })
    return (doc) => query.test(doc)
  } catch (error) {
    if (error instanceof CommandError) throw error
    const message = error instanceof Error ? error.message : String(error)
    if (message.includes('$where')) throw new CommandError(2, 'BadValue', '$where is not allowed in this context')
    const unknown = /unknown (?:top level |query )?operator:? (\S+)/.exec(message)
    throw new CommandError(2, 'BadValue', unknown ? `unknown operator: ${unknown[1]}` : message)
  }
}
