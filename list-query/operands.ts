import { ObjectId, type Document } from 'mongodb'
import { checkPattern, type PatternVerdict } from '../mongodb-regex/check-pattern.js'
import { OBJECT_ID } from '../schemas/fields.js'
import { parseDate, type DateValue } from './dates.js'
import { exactNumber } from './exact-number.js'
import type { FilterNode } from './filter-tree.js'
import type { Operator } from './operators.js'
import { childPointer, type Problems } from './problems.js'
import type { FieldSpec } from './query-spec.js'
import { size, sizeMessage } from './size-operand.js'

export { MAX_SIZE } from './size-operand.js'

const PARAM = 'filter'
export const MAX_ARRAY = 100
export const MAX_REGEX = 500
export const MAX_NUMBER = 2 ** 53
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/** What one operator compiles to: entries of the field's operator map, or a clause for `$and`. */
export type Converted = { operators: Array<[string, unknown]> } | { clause: Document }

type Literal = string | number | boolean | ObjectId | DateValue

const describe = (node: FilterNode): string => node.type === 'string' ? `'${node.value}'` : node.type

/** A literal of the field's type, converted (ObjectId, date, number from text); undefined after a problem. */
function literal (
  field: FieldSpec, node: FilterNode, parent: string, problems: Problems, index?: number
): Literal | undefined {
  const fast = fastLiteral(field, node)
  if (fast !== undefined) return fast
  const pointer = index === undefined ? parent : childPointer(parent, index)
  if (node.type === 'null') {
    problems.add(
      PARAM, pointer, 'INVALID_VALUE', 'null is not a value: to find documents without the field use {"$exists": false}'
    )
    return undefined
  }
  if (node.type === 'array' || node.type === 'object') {
    problems.add(
      PARAM, pointer, 'INVALID_VALUE', `An ${node.type} is not a value for '${field.path}': use $in or $all for lists`
    )
    return undefined
  }
  switch (field.kind) {
    case 'string': case 'string[]':
      if (node.type === 'string') return node.value
      break
    case 'number':
      if (node.type === 'number') return checkNumber(node.value, pointer, problems)
      if (node.type === 'string' && node.fromText && JSON_NUMBER.test(node.value)) {
        return checkNumber(exactNumber(node.value) ?? Number.NaN, pointer, problems)
      }
      break
    case 'boolean':
      if (node.type === 'boolean') return node.value
      if (node.type === 'string' && node.fromText && (node.value === 'true' || node.value === 'false')) {
        return node.value === 'true'
      }
      break
    case 'date': {
      const date = node.type === 'string' ? parseDate(node.value) : undefined
      if (date !== undefined) return date
      problems.add(
        PARAM, pointer, 'INVALID_DATE',
        `${describe(node)} is not a date for '${field.path}': ` +
          'write YYYY, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS(.mmm)Z (or ±HH:MM)'
      )
      return undefined
    }
    case 'ref': case 'ref[]':
      if (node.type === 'string' && OBJECT_ID.test(node.value)) return new ObjectId(node.value)
      problems.add(
        PARAM, pointer, 'INVALID_OBJECT_ID',
        `${describe(node)} is not an object id for '${field.path}': expected 24 hexadecimal characters`
      )
      return undefined
    case 'custom':
      if (node.type === 'number') return checkNumber(node.value, pointer, problems)
      // A bracket value has no type of its own: one written as a JSON number, true or false is
      // that value (filter[customFields.minutes][$gt]=60 compares numbers); JSON asks for "60".
      if (node.type === 'string' && node.fromText) {
        if (JSON_NUMBER.test(node.value)) return checkNumber(exactNumber(node.value) ?? Number.NaN, pointer, problems)
        if (node.value === 'true' || node.value === 'false') return node.value === 'true'
      }
      return node.value
  }
  problems.add(
    PARAM, pointer, 'INVALID_VALUE',
    `${describe(node)} is not a ${field.kind === 'string[]' ? 'string' : field.kind} value for '${field.path}'`
  )
  return undefined
}

/** The common valid cases, without building the pointer that only a problem needs. */
function fastLiteral (field: FieldSpec, node: FilterNode): Literal | undefined {
  if (node.type !== 'string') return undefined
  switch (field.kind) {
    case 'string': case 'string[]': return node.value
    case 'ref': case 'ref[]': return OBJECT_ID.test(node.value) ? new ObjectId(node.value) : undefined
    case 'date': return parseDate(node.value)
    default: return undefined
  }
}

function checkNumber (value: number, pointer: string, problems: Problems): number | undefined {
  if (Number.isFinite(value) && Math.abs(value) <= MAX_NUMBER) return value
  problems.add(PARAM, pointer, 'INVALID_VALUE', 'Numbers must be finite and within ±2^53')
  return undefined
}

function list (
  field: FieldSpec, op: Operator, node: FilterNode, pointer: string, problems: Problems
): Literal[] | undefined {
  if (node.type !== 'array') {
    problems.add(PARAM, pointer, 'INVALID_VALUE', `${op} takes an array of values`)
    return undefined
  }
  if (node.items.length > MAX_ARRAY) {
    problems.add(PARAM, pointer, 'ARRAY_TOO_LARGE', `${op} takes at most ${MAX_ARRAY} values, not ${node.items.length}`)
    return undefined
  }
  const values: Literal[] = []
  let valid = true
  for (let i = 0; i < node.items.length; i++) {
    const item = node.items[i] as FilterNode
    // The element's pointer is only built when the element has a problem.
    const value = literal(field, item, pointer, problems, i)
    if (value === undefined) valid = false
    else values.push(value)
  }
  return valid ? values : undefined
}

function flag (node: FilterNode): boolean | undefined {
  if (node.type === 'boolean') return node.value
  if (node.type === 'string' && node.fromText && (node.value === 'true' || node.value === 'false')) {
    return node.value === 'true'
  }
  return undefined
}

function codePoints (text: string): number {
  let n = 0
  for (const _ of text) n++ // eslint-disable-line @typescript-eslint/no-unused-vars
  return n
}

function regex (node: FilterNode, options: string, pointer: string, problems: Problems): string | undefined {
  if (node.type !== 'string') {
    problems.add(PARAM, pointer, 'INVALID_VALUE', '$regex takes a string pattern')
    return undefined
  }
  const pattern = node.value
  // Characters are code points (as JSON Schema's maxLength counts them), not UTF-16 units.
  if (pattern.length > MAX_REGEX && codePoints(pattern) > MAX_REGEX) {
    problems.add(
      PARAM, pointer, 'REGEX_TOO_LONG',
      `$regex patterns are at most ${MAX_REGEX} characters, not ${codePoints(pattern)}`
    )
    return undefined
  }
  // `/yoga/i` is JavaScript's notation: to MongoDB a valid pattern that looks for the slashes
  // themselves, and so, almost always, silently matches nothing. A pattern with a slash inside,
  // or without the closing one, is taken as it is.
  const literal = /^\/([^/]+)\/([A-Za-z]*)$/.exec(pattern)
  if (literal !== null) {
    const flags = [...new Set(`${options}${literal[2] as string}`)].filter((letter) => 'imsx'.includes(letter)).join('')
    const written = JSON.stringify(flags === '' ? { $regex: literal[1] } : { $regex: literal[1], $options: flags })
    problems.add(
      PARAM, pointer, 'INVALID_REGEX',
      `$regex '${pattern}' is refused by this service's own rule: ` +
        "slashes around a pattern are JavaScript's notation, " +
        `and MongoDB would look for the slashes themselves; write ${written}`
    )
    return undefined
  }
  const verdict = checkPattern(pattern, options)
  if (verdict.ok) return pattern
  problems.add(PARAM, pointer, verdict.code, regexMessage(verdict))
  return undefined
}

/**
 * Who refuses the pattern and why: MongoDB's engine, or this service by its own rule (and how to write it
 * instead).
 */
function regexMessage (verdict: Extract<PatternVerdict, { ok: false }>): string {
  if (verdict.code === 'UNSAFE_REGEX') {
    return "$regex is refused by this service's safety rule: " +
      `its matching time could grow faster than the text it searches (${verdict.reason}); simplify it`
  }
  if (verdict.nul === true) return '$regex cannot contain a NUL character: MongoDB refuses it'
  return verdict.by === 'pcre2'
    ? `$regex is not a pattern MongoDB's regex engine (PCRE2) compiles: ${verdict.reason}`
    : '$regex uses syntax this service refuses by its own rule ' +
      `(its meaning differs between PCRE2 and the JavaScript it is checked in): ${verdict.reason}`
}

const isPeriod = (v: Literal): v is Extract<DateValue, { kind: 'period' }> =>
  typeof v === 'object' && 'kind' in v && v.kind === 'period'
const isInstant = (v: Literal): v is Extract<DateValue, { kind: 'instant' }> =>
  typeof v === 'object' && 'kind' in v && v.kind === 'instant'
const plain = (v: Literal): unknown => isInstant(v) ? v.at : v

/**
 * One date in [start, end). Through arrays of embedded documents, inside `$elemMatch`: on a dotted
 * path into an array, MongoDB may meet `$gte` with one element and `$lt` with another (the manual,
 * "Query an Array of Embedded Documents", "Specify Multiple Conditions for Array of Documents").
 */
function within (field: FieldSpec, start: Date, end: Date): Document {
  let path = field.path
  let condition: Document = { $gte: start, $lt: end }
  for (const array of [...field.arrays ?? []].reverse()) {
    condition = { $elemMatch: { [path.slice(array.length + 1)]: condition } }
    path = array
  }
  return { [path]: condition }
}

/**
 * Date-only and year-only values name a period [s, e) (docs/query-language.md): $eq means s <= v < e,
 * $gt v >= e, $gte v >= s, $lt v < s, $lte v < e, $ne/$nin the negation, $in any period; each of
 * one element, where the date is in an array.
 */
function comparison (field: FieldSpec, op: Operator, value: Literal): Converted {
  if (!isPeriod(value)) return { operators: [[op, plain(value)]] }
  const { start, end } = value
  const inArray = field.arrays !== undefined
  switch (op) {
    case '$eq': return inArray ? { clause: within(field, start, end) } : { operators: [['$gte', start], ['$lt', end]] }
    case '$ne': return {
      clause: inArray ? { $nor: [within(field, start, end)] } : { [field.path]: { $not: { $gte: start, $lt: end } } }
    }
    case '$gt': return { operators: [['$gte', end]] }
    case '$gte': return { operators: [['$gte', start]] }
    case '$lt': return { operators: [['$lt', start]] }
    default: return { operators: [['$lt', end]] } // $lte
  }
}

function membership (field: FieldSpec, op: '$in' | '$nin', values: Literal[]): Converted {
  if (!values.some(isPeriod)) return { operators: [[op, values.map(plain)]] }
  const alternatives = values.map((v) => isPeriod(v) ? within(field, v.start, v.end) : { [field.path]: plain(v) })
  return { clause: op === '$in' ? { $or: alternatives } : { $nor: alternatives } }
}

/**
 * Checks one operator's operand against the field and compiles it; undefined after a problem.
 * `regexOptions` are the valid `$options` beside a `$regex` (they change how it reads).
 */
export function convertOperand (
  field: FieldSpec, op: Operator, node: FilterNode, pointer: string, problems: Problems, regexOptions = ''
): Converted | undefined {
  switch (op) {
    case '$in': case '$nin': case '$all': {
      const values = list(field, op, node, pointer, problems)
      if (values === undefined) return undefined
      return op === '$all' ? { operators: [[op, values.map(plain)]] } : membership(field, op, values)
    }
    case '$exists': {
      const value = flag(node)
      if (value !== undefined) return { operators: [['$exists', value]] }
      problems.add(PARAM, pointer, 'INVALID_VALUE', '$exists takes true or false')
      return undefined
    }
    case '$size': {
      const value = size(node)
      if (value !== undefined) return { operators: [['$size', value]] }
      problems.add(PARAM, pointer, 'INVALID_VALUE', sizeMessage(node))
      return undefined
    }
    case '$regex': {
      const pattern = regex(node, regexOptions, pointer, problems)
      return pattern === undefined ? undefined : { operators: [['$regex', pattern]] }
    }
    default: {
      const value = literal(field, node, pointer, problems)
      return value === undefined ? undefined : comparison(field, op, value)
    }
  }
}
