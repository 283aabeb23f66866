// The array update operators (manual: "Array Update Operators"): $push with its modifiers,
// $addToSet, $pull, $pullAll and $pop.
import { BSONRegExp, Long } from 'bson'
import { compareValues, isDocument, valuesEqual } from './bson-order.js'
import { CommandError } from './errors.js'
import { compileFilter } from './query-operators.js'
import { sortDocuments, parseSort } from './sort-and-project.js'
import { none, setField, shown, typeName, type Apply } from './update-apply.js'
import type { Doc } from './storage.js'
import { cloneDeep, getAt, setAt } from './update-paths.js'

function arrayAt (doc: Doc, parts: string[], op: string): unknown[] | undefined {
  const current = getAt(doc, parts)
  if (current === undefined || Array.isArray(current)) return current
  throw new CommandError(2, 'BadValue', `The field '${parts.join('.')}' must be an array ` +
    `but is of type ${typeName(current)} in document {_id: ${shown(doc._id)}} (${op})`)
}

interface PushSpec { each: unknown[], position?: number, slice?: number, sort?: unknown }

function readPush (operand: unknown): PushSpec {
  if (!isDocument(operand) || !('$each' in operand)) return { each: [operand] }
  const spec: PushSpec = { each: [] }
  for (const [key, value] of Object.entries(operand)) {
    const n = value instanceof Long ? value.toNumber() : value
    if (key === '$each') {
      if (!Array.isArray(value)) {
        throw new CommandError(2, 'BadValue',
          `The argument to $each in $push must be an array but it was of type: ${typeName(value)}`)
      }
      spec.each = value
    } else if (key === '$position' && typeof n === 'number' && Number.isInteger(n)) {
      spec.position = n
    } else if (key === '$slice' && typeof n === 'number' && Number.isInteger(n)) {
      spec.slice = n
    } else if (key === '$sort') {
      spec.sort = value
    } else {
      throw new CommandError(2, 'BadValue', `Unrecognized clause in $push: ${key}`)
    }
  }
  return spec
}

/** `$sort` in `$push`: 1/-1 orders the elements, a document orders embedded documents by its fields. */
function sortElements (elements: unknown[], sort: unknown): unknown[] {
  const direction = sort instanceof Long ? sort.toNumber() : sort
  if (direction === 1 || direction === -1) return [...elements].sort((a, b) => compareValues(a, b) * direction)
  if (!isDocument(sort)) {
    throw new CommandError(2, 'BadValue',
      'The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields')
  }
  return sortDocuments(elements as Doc[], parseSort(sort))
}

export const push: Apply = (doc, { parts, operand }) => {
  const spec = readPush(operand)
  const current = arrayAt(doc, parts, '$push')
  const appended = cloneDeep(spec.each)
  let next = current === undefined ? [] : [...current]
  const at = spec.position === undefined
    ? next.length
    : spec.position < 0 ? Math.max(0, next.length + spec.position) : Math.min(spec.position, next.length)
  next.splice(at, 0, ...appended)
  if (spec.sort !== undefined) next = sortElements(next, spec.sort)
  if (spec.slice !== undefined) next = spec.slice >= 0 ? next.slice(0, spec.slice) : next.slice(spec.slice)
  const plainAppend = current !== undefined && spec.position === undefined && spec.sort === undefined &&
    spec.slice === undefined
  if (!plainAppend) return setField(doc, parts, next)
  // An append is reported element by element ('tags.2'), the rest of the array unchanged.
  setAt(doc, parts, next)
  return { set: appended.map((value, i) => [[...parts, String(current.length + i)], value]), removed: [] }
}

export const addToSet: Apply = (doc, { parts, operand }) => {
  const each = isDocument(operand) && Object.keys(operand)[0] === '$each' ? operand.$each : [operand]
  if (!Array.isArray(each)) {
    throw new CommandError(2, 'BadValue',
      `The argument to $each in $addToSet must be an array but it was of type ${typeName(each)}`)
  }
  const current = arrayAt(doc, parts, '$addToSet')
  const next = current === undefined ? [] : [...current]
  for (const value of each) if (!next.some((element) => valuesEqual(element, value))) next.push(cloneDeep(value))
  return setField(doc, parts, next)
}

/**
 * The elements `$pull` removes: those matching a condition, a query on documents, or equal to a
 * value (manual: "$pull").
 */
export function pullTest (operand: unknown): (element: unknown) => boolean {
  if (operand instanceof BSONRegExp ||
    (isDocument(operand) && Object.keys(operand).some((key) => key.startsWith('$')))) {
    const test = compileFilter({ v: operand })
    return (element) => test({ v: element })
  }
  if (isDocument(operand)) {
    const test = compileFilter(operand)
    return (element) => isDocument(element) && test(element)
  }
  return (element) => valuesEqual(element, operand)
}

export function removing (op: string, test: (operand: unknown) => (element: unknown) => boolean): Apply {
  return (doc, { parts, operand }) => {
    const current = arrayAt(doc, parts, op)
    if (current === undefined) return none()
    const matches = test(operand)
    return setField(doc, parts, current.filter((element) => !matches(element)))
  }
}

export const pullAll = removing('$pullAll', (operand) => {
  if (!Array.isArray(operand)) {
    throw new CommandError(2, 'BadValue', `$pullAll requires an array argument but was given a ${typeName(operand)}`)
  }
  return (element) => operand.some((value) => valuesEqual(element, value))
})

export const pop: Apply = (doc, { parts, operand }) => {
  const direction = operand instanceof Long ? operand.toNumber() : operand
  if (direction !== 1 && direction !== -1) {
    throw new CommandError(9, 'FailedToParse', `$pop expects 1 or -1, found: ${shown(operand)}`)
  }
  const current = arrayAt(doc, parts, '$pop')
  if (current === undefined || current.length === 0) return none()
  return setField(doc, parts, direction === 1 ? current.slice(0, -1) : current.slice(1))
}
