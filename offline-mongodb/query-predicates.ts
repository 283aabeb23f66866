// MongoDB's query operators as predicates over the values a path reaches (field-paths.ts),
// with the collation's string order where mongod uses it: equality, $in/$nin/$all, ranges and
// $elemMatch follow it; $regex, $type, $size and $exists do not (manual: "Collation").
import { Long } from 'bson'
import { compareValues, isDocument, typeRank, valuesEqual, type StringOrder } from './bson-order.js'
import { expandArrays } from './field-paths.js'
import { Pcre2Pattern } from './regex.js'
import { typeMatcher } from './query-types.js'
import { CommandError } from './errors.js'

type Candidates = unknown[]
/**
 * Whether the candidates pass. `whole`: each candidate is one value, never the elements of an
 * array as well (an $elemMatch element, ElemMatchValueMatchExpression's matchesSingleElement).
 */
export type Predicate = (candidates: Candidates, whole?: boolean) => boolean

/** What a predicate is built with: the collation's string order, and how to compile a sub-query. */
export interface PredicateEnv {
  strings: StringOrder | undefined
  subQuery: (criteria: Record<string, unknown>) => (doc: Record<string, unknown>) => boolean
}

type PredicateBuilder = (operand: unknown, env: PredicateEnv) => Predicate

function equalsAny (
  candidates: Candidates, operand: unknown, strings: StringOrder | undefined, whole = false
): boolean {
  for (const candidate of candidates) {
    if (candidate === undefined) {
      if (operand === null) return true
      continue
    }
    if (valuesEqual(candidate, operand, strings)) return true
    if (!whole && Array.isArray(candidate) &&
      candidate.some((element) => valuesEqual(element, operand, strings))) return true
  }
  return false
}

function matchesRegex (candidates: Candidates, re: Pcre2Pattern, whole = false): boolean {
  return (whole ? candidates : expandArrays(candidates)).some((value) => typeof value === 'string' && re.test(value))
}

/** Range operators only compare values of the same type bracket as the operand. */
function comparison (accept: (order: number) => boolean): PredicateBuilder {
  return (operand, { strings }) => {
    const rank = typeRank(operand)
    return (candidates, whole) =>
      (whole || Array.isArray(operand) ? candidates : expandArrays(candidates)).some((value) => {
        if (value === undefined) return operand === null && accept(0)
        return typeRank(value) === rank && accept(compareValues(value, operand, strings))
      })
  }
}

function inList (operand: unknown, strings: StringOrder | undefined): Predicate {
  if (!Array.isArray(operand)) throw new CommandError(2, 'BadValue', '$in needs an array')
  const tests = operand.map((value): Predicate => value instanceof Pcre2Pattern
    ? (c, whole) => matchesRegex(c, value, whole)
    : (c, whole) => equalsAny(c, value, strings, whole))
  return (candidates, whole) => tests.some((test) => test(candidates, whole))
}

function regexPredicate (operand: unknown): Predicate {
  if (!(operand instanceof Pcre2Pattern)) throw new CommandError(2, 'BadValue', '$regex has to be a string')
  return (c, whole) => matchesRegex(c, operand, whole)
}

/**
 * mongod's pathless operators (expression_parser.cpp, pathlessOperatorMap): an $elemMatch led by one is of the
 * object form.
 */
const PATHLESS = new Set([
  '$and', '$or', '$nor', '$where', '$expr', '$text', '$comment', '$jsonSchema', '$alwaysTrue', '$alwaysFalse',
  '$sampleRate'
])

/**
 * $elemMatch, in mongod's two forms (expression_parser.cpp, parseElemMatch). The value form,
 * when the first field is an operator that is not pathless and the document is no DBRef
 * ($ref/$id/$db): every operator holds for one element, taken as a whole. Otherwise the object
 * form: one element that is a document (or an array, read as a document) matches the query;
 * it never matches scalar elements.
 */
function elemMatch (operand: unknown, env: PredicateEnv): Predicate {
  if (!isDocument(operand)) throw new CommandError(2, 'BadValue', '$elemMatch needs an Object')
  const keys = Object.keys(operand)
  const first = keys[0]
  const dbRef = keys.some((key) => key === '$ref' || key === '$id' || key === '$db')
  if (first !== undefined && first.startsWith('$') && !dbRef && !PATHLESS.has(first)) {
    const test = operatorsPredicate(operand, env)
    return (candidates) => candidates.some((c) => Array.isArray(c) && c.some((element) => test([element], true)))
  }
  const query = env.subQuery(operand)
  const asDocument = (element: unknown): Record<string, unknown> | undefined =>
    isDocument(element)
      ? element
      : Array.isArray(element) ? Object.fromEntries(element.map((v, i) => [String(i), v])) : undefined
  return (candidates) => candidates.some((c) => Array.isArray(c) && c.some((element) => {
    const doc = asDocument(element)
    return doc !== undefined && query(doc)
  }))
}

/** All of a document's operators on one path ($not's operand, $elemMatch's value form). */
function operatorsPredicate (expression: Record<string, unknown>, env: PredicateEnv): Predicate {
  const parts = Object.entries(expression).filter(([op]) => op !== '$options')
  if (parts.length === 0) throw new CommandError(2, 'BadValue', '$not cannot be empty')
  const tests = parts.map(([op, operand]) => {
    const build = Object.hasOwn(PREDICATES, op) ? PREDICATES[op] : undefined
    if (build === undefined) throw new CommandError(2, 'BadValue', `unknown operator: ${op}`)
    return build(operand, env)
  })
  return (candidates, whole) => tests.every((test) => test(candidates, whole))
}

function notPredicate (expression: unknown, env: PredicateEnv): Predicate {
  if (expression instanceof Pcre2Pattern) return (c, whole) => !matchesRegex(c, expression, whole)
  if (!isDocument(expression)) throw new CommandError(2, 'BadValue', '$not needs a regex or a document')
  const test = operatorsPredicate(expression, env)
  return (c, whole) => !test(c, whole)
}

export const PREDICATES: Record<string, PredicateBuilder> = {
  $eq: (operand, { strings }) => (c, whole) => equalsAny(c, operand, strings, whole),
  $ne: (operand, { strings }) => (c, whole) => !equalsAny(c, operand, strings, whole),
  $gt: comparison((order) => order > 0),
  $gte: comparison((order) => order >= 0),
  $lt: comparison((order) => order < 0),
  $lte: comparison((order) => order <= 0),
  $in: (operand, { strings }) => inList(operand, strings),
  $nin: (operand, { strings }) => {
    const test = inList(operand, strings)
    return (c, whole) => !test(c, whole)
  },
  $exists: (operand) => (c) => c.some((value) => value !== undefined) === Boolean(operand),
  $regex: regexPredicate,
  // `$regex`, and a regex as a field's value, after prepareFilter (mingo rewrites `$regex` itself).
  $pcre: regexPredicate,
  $all: (operand, env) => {
    if (!Array.isArray(operand)) throw new CommandError(2, 'BadValue', '$all needs an array')
    const tests = operand.map((value): Predicate => {
      if (value instanceof Pcre2Pattern) return (c, whole) => matchesRegex(c, value, whole)
      if (isDocument(value) && Object.keys(value)[0] === '$elemMatch') return elemMatch(value.$elemMatch, env)
      return (c, whole) => equalsAny(c, value, env.strings, whole)
    })
    return (c, whole) => tests.length > 0 && tests.every((test) => test(c, whole))
  },
  $size: (operand) => {
    const size = Number(operand instanceof Long ? operand.toNumber() : operand)
    if (!Number.isInteger(size) || size < 0) throw new CommandError(2, 'BadValue', '$size needs a non-negative integer')
    return (c) => c.some((value) => Array.isArray(value) && value.length === size)
  },
  $type: (operand) => typeMatcher(operand),
  $elemMatch: elemMatch,
  $not: notPredicate
}
