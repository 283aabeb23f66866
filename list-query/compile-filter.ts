// Validates a filter tree against an endpoint's QuerySpec and compiles it to a MongoDB filter.
// Every problem is collected with its JSON Pointer; nothing reaches the driver unless all is well.
import type { Document } from 'mongodb'
import { emptiedByRefusals, type FilterNode } from './filter-tree.js'
import { compileElemMatch, type Enclosing } from './compile-elem-match.js'
import { MAX_BRANCHES, MAX_CONDITIONS, MAX_DEPTH } from './limits.js'
import { BLOCKED_OPERATORS, ELEM_MATCH, isOperator, type Operator } from './operators.js'
import { childPointer, type Problems } from './problems.js'
import { resolvePath, type FieldSpec, type QuerySpec } from './query-spec.js'
import { convertOperand, type Converted } from './operands.js'

const PARAM = 'filter'

/** Per field: an operator map, plus clauses that need `$and` (date periods, repeated operators). */
class FieldConditions {
  readonly operators: Document = {}
  readonly clauses: Document[] = []

  constructor (private readonly path: string) {}

  set (operator: string, value: unknown): void {
    if (operator in this.operators) this.clauses.push({ [this.path]: { [operator]: value } })
    else this.operators[operator] = value
  }

  add (converted: Converted): void {
    if ('clause' in converted) this.clauses.push(converted.clause)
    else for (const [operator, value] of converted.operators) this.set(operator, value)
  }
}

const LOGICAL_EXAMPLE = '[{"name":"Yoga"},{"tags":"yoga"}]'

export function compileFilter (tree: FilterNode, spec: QuerySpec, problems: Problems): Document | undefined {
  if (tree.type !== 'object') {
    problems.add(PARAM, '', 'FILTER_NOT_OBJECT', 'filter must be a JSON object of field conditions, ' +
      'such as {"name":"Yoga"}')
    return undefined
  }
  reportBlocked(tree, [], problems)
  const size = { conditions: 0 }
  const filter = compileObject(tree.entries, '', 0, spec, problems, size)
  if (size.conditions > MAX_CONDITIONS) {
    problems.add(PARAM, '', 'FILTER_TOO_COMPLEX', `The filter holds ${size.conditions} field conditions; ` +
      `at most ${MAX_CONDITIONS} (a value is one, an object of operators one per operator), counted over all branches`)
  }
  return problems.empty ? filter : undefined
}

/**
 * One filter object: its field conditions side by side, and its `$or` and `$and` branches, at
 * `depth` (0 for the filter itself, 1 in a branch of a top-level `$or`/`$and`, …).
 */
function compileObject (
  entries: Array<[string, FilterNode]>, pointer: string, depth: number, spec: QuerySpec, problems: Problems,
  size: { conditions: number }
): Document {
  const filter: Document = {}
  const and: Document[] = []
  for (const [path, value] of entries) {
    if (problems.full) break
    const at = childPointer(pointer, path)
    if (path === '$or' || path === '$and') {
      const branches = compileBranches(path, value, at, depth + 1, spec, problems, size)
      if (branches === undefined) continue
      if (path === '$or') filter.$or = branches
      else and.unshift(...branches)
      continue
    }
    if (path.startsWith('$')) {
      if (!BLOCKED_OPERATORS.has(path)) {
        problems.add(PARAM, at, 'UNKNOWN_OPERATOR', `'${path}' is not supported: conditions written side by side ` +
          `must all hold; "$or" and "$and" take arrays of filters, such as {"$or":${LOGICAL_EXAMPLE}}`)
      }
      continue
    }
    // An `$elemMatch` counts the conditions inside it, not itself.
    size.conditions += value.type === 'object' ? value.entries.filter(([key]) => key !== ELEM_MATCH).length : 1
    const resolved = resolvePath(spec, path, 'filter')
    if (!('field' in resolved)) {
      problems.add(PARAM, at, resolved.code, resolved.message)
      continue
    }
    const enclosing: Enclosing = {
      depth,
      size,
      object: (inner, innerPointer, innerDepth, innerSpec) =>
        compileObject(inner, innerPointer, innerDepth, innerSpec, problems, size)
    }
    const conditions = compileField(resolved.field, value, at, spec, enclosing, problems)
    if (conditions === undefined) continue
    if (Object.keys(conditions.operators).length > 0) filter[path] = conditions.operators
    and.push(...conditions.clauses)
  }
  if (and.length > 0) filter.$and = and
  return filter
}

/** The branches of a `$or` or `$and` at nesting level `depth` (1 at the top). */
function compileBranches (
  operator: '$or' | '$and', value: FilterNode, pointer: string, depth: number, spec: QuerySpec, problems: Problems,
  size: { conditions: number }
): Document[] | undefined {
  if (depth > MAX_DEPTH) {
    problems.add(PARAM, pointer, 'FILTER_TOO_COMPLEX', `This ${operator} is nested ${depth} deep; ` +
      `$or and $and nest at most ${MAX_DEPTH} deep (an $or in an $and in an $or)`)
    return undefined
  }
  if (value.type !== 'array' || value.items.length === 0) {
    problems.add(PARAM, pointer, 'INVALID_VALUE', `${operator} takes an array of 1 to ${MAX_BRANCHES} ` +
      `filter objects, such as {"${operator}":${LOGICAL_EXAMPLE}}`)
    return undefined
  }
  if (value.items.length > MAX_BRANCHES) {
    problems.add(PARAM, pointer, 'FILTER_TOO_COMPLEX', `${operator} has ${value.items.length} branches; ` +
      `at most ${MAX_BRANCHES}`)
  }
  const branches: Document[] = []
  value.items.forEach((item, i) => {
    if (problems.full) return
    if (item.type !== 'object') {
      problems.add(PARAM, childPointer(pointer, i), 'INVALID_VALUE', `Each branch of ${operator} is a filter object, ` +
        'such as {"name":"Yoga"} ({} matches every document)')
      return
    }
    branches.push(compileObject(item.entries, childPointer(pointer, i), depth, spec, problems, size))
  })
  return branches
}

function compileField (
  field: FieldSpec, value: FilterNode, pointer: string, spec: QuerySpec, enclosing: Enclosing, problems: Problems
): FieldConditions | undefined {
  const conditions = new FieldConditions(field.path)
  if (value.type !== 'object') {
    const converted = convertOperand(field, '$eq', value, pointer, problems)
    if (converted !== undefined) conditions.add(converted)
    return conditions
  }
  if (value.entries.length === 0) {
    if (!emptiedByRefusals(value)) {
      problems.add(PARAM, pointer, 'INVALID_VALUE', `The condition on '${field.path}' is an empty object: ` +
        'give a value or operators such as {"$eq": …}')
    }
    return undefined
  }
  let options: FilterNode | undefined
  for (const [key, operand] of value.entries) if (key === '$options') options = operand
  const regexOptions = options?.type === 'string' && validOptions(options.value) ? options.value : ''
  for (const [key, operand] of value.entries) {
    const at = childPointer(pointer, key)
    if (BLOCKED_OPERATORS.has(key)) continue
    if (key === ELEM_MATCH) {
      const converted = compileElemMatch(field, operand, at, spec, enclosing, problems)
      if (converted !== undefined) conditions.add(converted)
      continue
    }
    if (!key.startsWith('$')) {
      problems.add(PARAM, at, 'INVALID_VALUE', `'${key}' is not an operator: a condition is either a value or ` +
        'an object of operators (objects cannot be compared)')
      continue
    }
    if (!isOperator(key)) {
      problems.add(PARAM, at, 'UNKNOWN_OPERATOR', `Unknown operator '${key}'; ` +
        `operators are ${[...field.operators].join(' ')}`)
      continue
    }
    if (!field.operators.has(key)) {
      problems.add(PARAM, at, 'OPERATOR_NOT_ALLOWED', `'${key}' is not allowed on the ${field.kind} field ` +
        `'${field.path}'; allowed: ${[...field.operators].join(' ')}`)
      continue
    }
    if (key === '$options') {
      if (!value.entries.some(([other]) => other === '$regex')) {
        problems.add(PARAM, at, 'INVALID_REGEX_OPTIONS', '$options is only allowed next to $regex')
      } else {
        checkOptions(operand, at, problems)
      }
      continue
    }
    const converted = convertOperand(field, key as Operator, operand, at, problems, regexOptions)
    if (converted !== undefined) conditions.add(converted)
  }
  if (options?.type === 'string' && '$regex' in conditions.operators) conditions.operators.$options = options.value
  return conditions
}

/** Flags i, m, s and x, each at most once. */
function validOptions (text: string): boolean {
  if (text.length > 4) return false
  for (let i = 0; i < text.length; i++) {
    const flag = text[i] as string
    if (!'imsx'.includes(flag) || text.indexOf(flag) !== i) return false
  }
  return true
}

function checkOptions (operand: FilterNode, pointer: string, problems: Problems): void {
  if (operand.type !== 'string' || !validOptions(operand.value)) {
    problems.add(PARAM, pointer, 'INVALID_REGEX_OPTIONS', '$options takes the flags i, m, s and x, each at most once')
  }
}

/**
 * `$where`, `$near`, `$geoWithin` and `$geoIntersects` are refused wherever they appear. The
 * pointer is written only for what is found: `path` holds the keys and indexes on the way.
 */
function reportBlocked (node: FilterNode, path: Array<string | number>, problems: Problems): void {
  if (node.type === 'object') {
    for (const [key, value] of node.entries) {
      if (BLOCKED_OPERATORS.has(key)) {
        problems.add(
          PARAM, [...path, key].reduce<string>(childPointer, ''), 'BLOCKED_OPERATOR',
          `'${key}' is blocked for security reasons`
        )
      } else if (value.type === 'object' || value.type === 'array') {
        path.push(key)
        reportBlocked(value, path, problems)
        path.pop()
      }
    }
  } else if (node.type === 'array') {
    node.items.forEach((item, i) => {
      if (item.type !== 'object' && item.type !== 'array') return
      path.push(i)
      reportBlocked(item, path, problems)
      path.pop()
    })
  }
}
