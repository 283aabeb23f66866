// `$elemMatch` (docs/query-language.md, "One element of an array"): conditions that one and the
// same element must satisfy. Its two forms follow MongoDB's: on an array of documents the object
// names the element's fields; on an array of scalars it holds operators of the element's type.
import { BSONRegExp, type Document } from 'mongodb'
import { emptiedByRefusals, type FilterNode } from './filter-tree.js'
import { MAX_BRANCHES, MAX_DEPTH } from './limits.js'
import {
  BLOCKED_OPERATORS, ELEMENT_KIND, ELEMENT_OPERATORS, ELEM_MATCH, isOperator, type Operator
} from './operators.js'
import { convertOperand, type Converted } from './operands.js'
import { childPointer, type Problems } from './problems.js'
import type { FieldSpec, QuerySpec } from './query-spec.js'

const PARAM = 'filter'

/** What the filter compiler lends: its nesting depth, its condition count, and itself for element documents. */
export interface Enclosing {
  depth: number
  size: { conditions: number }
  object: (entries: Array<[string, FilterNode]>, pointer: string, depth: number, spec: QuerySpec) => Document
}

/** One operator of one alternative, for an array of scalars. */
interface Atom { op: string, value: unknown, options?: string }

const EXAMPLES: Record<string, string> = {
  'object[]': '{"$elemMatch":{"session":"665f1c2e9b1d4a3f5c7e8a90","subscribedAt":{"$gte":"2024-06-01"}}}',
  string: '{"$elemMatch":{"$regex":"^yo","$options":"i"}}',
  ref: '{"$elemMatch":{"$in":["665f1c2e9b1d4a3f5c7e8a90"]}}'
}

/** Compiles `$elemMatch` on `field`; `pointer` is the operator's own. Undefined after a problem. */
export function compileElemMatch (
  field: FieldSpec, node: FilterNode, pointer: string, spec: QuerySpec, enclosing: Enclosing, problems: Problems
): Converted | undefined {
  const element = ELEMENT_KIND[field.kind]
  if (element === undefined) {
    // A dotted path other than a custom field's is a field of an array's elements.
    const inside = field.kind !== 'custom' && field.path.includes('.')
      ? ' inside an array: use $elemMatch on the array itself'
      : ''
    problems.add(PARAM, pointer, 'OPERATOR_NOT_ALLOWED', `'$elemMatch' applies to array fields only; '${field.path}' ` +
      `is a ${field.kind} field${inside}`)
    return undefined
  }
  if (emptiedByRefusals(node)) return undefined
  if (node.type !== 'object' || node.entries.length === 0) {
    problems.add(PARAM, pointer, 'INVALID_VALUE', '$elemMatch takes a non-empty object of conditions on one element, ' +
      `such as {"${field.path}":${EXAMPLES[element] as string}}`)
    return undefined
  }
  if (element === 'object[]') {
    const elementSpec = spec.elements.get(field.path)
    if (elementSpec === undefined) return undefined
    const valueOperator = ([key]: [string, FilterNode]): boolean => isOperator(key) || key === ELEM_MATCH
    for (const [key] of node.entries.filter(valueOperator)) {
      problems.add(PARAM, childPointer(pointer, key), 'OPERATOR_NOT_ALLOWED', `The elements of '${field.path}' are ` +
        `documents: $elemMatch names their fields (${[...elementSpec.fields.keys()].join(', ')}), ` +
        `such as ${EXAMPLES['object[]'] as string}`)
    }
    const compiled = enclosing.object(
      node.entries.filter((entry) => !valueOperator(entry)), pointer, enclosing.depth, elementSpec
    )
    return { operators: [[ELEM_MATCH, compiled]] }
  }
  const elementField: FieldSpec = {
    path: field.path, kind: element, operators: ELEMENT_OPERATORS[element] as ReadonlySet<Operator>, sortable: false
  }
  const alternatives = scalarAlternatives(
    elementField, node.entries, pointer, enclosing.depth, enclosing.size, problems
  )
  if (alternatives === undefined) return undefined
  const documents: Document[] = []
  for (const atoms of alternatives) {
    const document = valueForm(atoms, field.path, pointer, problems)
    if (document !== undefined) documents.push(document)
  }
  if (documents.length !== alternatives.length) return undefined
  // ∃e (A ∨ B) is (∃e A) ∨ (∃e B): MongoDB's value form has no $or of its own.
  return documents.length === 1
    ? { operators: [[ELEM_MATCH, documents[0]]] }
    : { clause: { $or: documents.map((document) => ({ [field.path]: { [ELEM_MATCH]: document } })) } }
}

/**
 * The conditions on one scalar element as alternatives (a disjunction of conjunctions), at most
 * MAX_BRANCHES of them: `$or` adds alternatives, `$and` multiplies them.
 */
function scalarAlternatives (
  field: FieldSpec, entries: Array<[string, FilterNode]>, pointer: string, depth: number, size: { conditions: number },
  problems: Problems
): Atom[][] | undefined {
  let alternatives: Atom[][] = [[]]
  const options = entries.find(([key]) => key === '$options')?.[1]
  const regexOptions = options?.type === 'string' && /^(?!.*(.).*\1)[imsx]{0,4}$/.test(options.value)
    ? options.value
    : ''
  let valid = true
  for (const [key, operand] of entries) {
    const at = childPointer(pointer, key)
    if (key === '$or' || key === '$and') {
      const branches = scalarBranches(field, key, operand, at, depth + 1, size, problems)
      if (branches === undefined) {
        valid = false
        continue
      }
      const combined: Atom[][] = []
      if (key === '$or') {
        const union = branches.flat()
        for (const alternative of alternatives) for (const other of union) combined.push([...alternative, ...other])
      } else {
        let product = alternatives
        for (const branch of branches) {
          product = product.flatMap((alternative) => branch.map((other) => [...alternative, ...other]))
        }
        combined.push(...product)
      }
      if (combined.length > MAX_BRANCHES) {
        problems.add(PARAM, at, 'FILTER_TOO_COMPLEX', `Inside $elemMatch on '${field.path}', this ${key} makes ` +
          `${combined.length} alternatives for one element; at most ${MAX_BRANCHES}`)
        return undefined
      }
      alternatives = combined
      continue
    }
    size.conditions += 1
    if (!key.startsWith('$')) {
      problems.add(PARAM, at, 'INVALID_VALUE', `The elements of '${field.path}' are ` +
        `${field.kind === 'ref' ? 'object ids' : 'strings'}: $elemMatch holds operators, ` +
        `such as ${EXAMPLES[field.kind] as string}`)
      valid = false
      continue
    }
    const atoms = scalarAtoms(field, key, operand, at, regexOptions, entries, problems)
    if (atoms === undefined) {
      valid = false
      continue
    }
    alternatives = alternatives.map((alternative) => [...alternative, ...atoms])
  }
  return valid ? alternatives : undefined
}

function scalarBranches (
  field: FieldSpec, operator: string, node: FilterNode, pointer: string, depth: number, size: { conditions: number },
  problems: Problems
): Atom[][][] | undefined {
  if (depth > MAX_DEPTH) {
    problems.add(PARAM, pointer, 'FILTER_TOO_COMPLEX', `This ${operator} is nested ${depth} deep; ` +
      `$or and $and nest at most ${MAX_DEPTH} deep`)
    return undefined
  }
  if (node.type !== 'array' || node.items.length === 0 || node.items.length > MAX_BRANCHES) {
    const code = node.type === 'array' && node.items.length > MAX_BRANCHES ? 'FILTER_TOO_COMPLEX' : 'INVALID_VALUE'
    problems.add(PARAM, pointer, code, `${operator} inside $elemMatch takes an array of 1 to ${MAX_BRANCHES} objects ` +
      `of operators, such as {"${operator}":[{"$regex":"^yo"},{"$eq":"pilates"}]}`)
    return undefined
  }
  const branches: Atom[][][] = []
  node.items.forEach((item, i) => {
    const at = childPointer(pointer, i)
    if (emptiedByRefusals(item)) return
    if (item.type !== 'object' || item.entries.length === 0) {
      problems.add(PARAM, at, 'INVALID_VALUE', `Each branch of ${operator} inside $elemMatch is a non-empty object ` +
        `of operators on one element of '${field.path}'`)
      return
    }
    const alternatives = scalarAlternatives(field, item.entries, at, depth, size, problems)
    if (alternatives !== undefined) branches.push(alternatives)
  })
  return branches.length === node.items.length ? branches : undefined
}

function scalarAtoms (
  field: FieldSpec, key: string, operand: FilterNode, at: string, regexOptions: string,
  entries: Array<[string, FilterNode]>, problems: Problems
): Atom[] | undefined {
  // A blocked operator is reported once, as blocked, wherever it stands (compile-filter.ts).
  if (BLOCKED_OPERATORS.has(key)) return undefined
  if (!isOperator(key) && key !== ELEM_MATCH) {
    problems.add(PARAM, at, 'UNKNOWN_OPERATOR', `Unknown operator '${key}'; inside $elemMatch on '${field.path}': ` +
      `${[...field.operators].join(' ')}`)
    return undefined
  }
  if (!field.operators.has(key as Operator)) {
    const why = key === ELEM_MATCH
      ? '$elemMatch does not nest inside itself'
      : `one element of '${field.path}' takes ${[...field.operators].join(' ')}`
    problems.add(PARAM, at, 'OPERATOR_NOT_ALLOWED', `'${key}' is not allowed inside $elemMatch: ${why}`)
    return undefined
  }
  if (key === '$options') {
    if (!entries.some(([other]) => other === '$regex')) {
      problems.add(PARAM, at, 'INVALID_REGEX_OPTIONS', '$options is only allowed next to $regex')
    } else if (operand.type !== 'string' || operand.value !== regexOptions) {
      problems.add(PARAM, at, 'INVALID_REGEX_OPTIONS', '$options takes the flags i, m, s and x, each at most once')
    } else {
      return []
    }
    return undefined
  }
  const converted = convertOperand(field, key as Operator, operand, at, problems, regexOptions)
  if (converted === undefined) return undefined
  if ('clause' in converted) return undefined // no periods: elements of scalar arrays are strings or ids
  return converted.operators.map(([op, value]) =>
    op === '$regex' ? { op, value, options: regexOptions } : { op, value })
}

/**
 * One alternative in MongoDB's value form. An operator given twice cannot be a key twice: equal
 * values and patterns join `$all` (each must hold), exclusions join `$nin`; a bound or `$in`
 * given twice is refused rather than merged by an order this service does not own.
 */
function valueForm (atoms: Atom[], path: string, pointer: string, problems: Problems): Document | undefined {
  const document: Document = {}
  const all: unknown[] = []
  const excluded: unknown[] = []
  for (const { op, value, options } of atoms) {
    if (op === '$ne') excluded.push(value)
    else if (op === '$nin') excluded.push(...(value as unknown[]))
    else if (!(op in document)) {
      document[op] = value
      if (op === '$regex' && options !== undefined && options !== '') document.$options = options
    } else if (op === '$eq') all.push(value)
    else if (op === '$regex') all.push(new BSONRegExp(value as string, options))
    else {
      problems.add(PARAM, pointer, 'FILTER_TOO_COMPLEX', `Inside $elemMatch on '${path}', one alternative ` +
        `gives ${op} twice; give each bound once (or use $in)`)
      return undefined
    }
  }
  if (all.length > 0) document.$all = all
  if (excluded.length > 0) document.$nin = excluded
  return document
}
