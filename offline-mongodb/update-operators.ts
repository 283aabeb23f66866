// Update operator documents (manual: "Update Operators"), applied to a copy of the document, with
// the change described as a change stream's `updateDescription` reports it.
import { BSONRegExp, EJSON, Long, type Timestamp } from 'bson'
import { compareValues, isDocument, valuesEqual } from './bson-order.js'
import { CommandError } from './errors.js'
import type { UpdateDescription } from './oplog.js'
import { compileFilter } from './query-operators.js'
import { sortDocuments, parseSort } from './sort-and-project.js'
import type { Doc } from './storage.js'
import { bsonEqual, cloneDeep, comparePaths, crossesArray, getAt, parseUpdatePath, setAt, unsetAt } from './update-paths.js'

export interface UpdateContext {
  /** An upsert inserting: `$setOnInsert` applies (manual: "$setOnInsert"). */
  inserting: boolean
  /** The time `$currentDate` gives a Timestamp field. */
  now: () => Timestamp
}

export interface UpdateOutcome { doc: Doc, description: UpdateDescription, changed: boolean }

interface Action { op: string, parts: string[], operand: unknown, target?: string[] }

/** Operators mongod has that the stand-in refuses rather than approximates. */
const REFUSED = new Set(['$bit'])

export function isOperatorUpdate (update: Doc): boolean {
  return Object.keys(update)[0]?.startsWith('$') ?? false
}

function typeName (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'double'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'bool'
  if (value instanceof Date) return 'date'
  if (isDocument(value)) return 'object'
  return (value as { _bsontype?: string })._bsontype?.toLowerCase() ?? typeof value
}

const shown = (value: unknown): string => EJSON.stringify(value as never, { relaxed: true })

function readActions (update: Doc): Action[] {
  const actions: Action[] = []
  for (const [op, fields] of Object.entries(update)) {
    if (REFUSED.has(op)) throw new CommandError(9, 'FailedToParse', `the offline database does not support the update modifier ${op}`)
    if (!Object.hasOwn(APPLY, op)) {
      throw new CommandError(9, 'FailedToParse', `Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`)
    }
    if (!isDocument(fields)) {
      throw new CommandError(9, 'FailedToParse', `Modifiers operate on fields but we found type ${typeName(fields)} instead. For example: {$mod: {<field>: ...}} not {${op}: ${shown(fields)}}`)
    }
    for (const [path, operand] of Object.entries(fields)) {
      const action: Action = { op, parts: parseUpdatePath(path), operand }
      if (op === '$rename') {
        if (typeof operand !== 'string') throw new CommandError(2, 'BadValue', `The 'to' field for $rename must be a string: ${path}: ${shown(operand)}`)
        action.target = parseUpdatePath(operand)
      }
      actions.push(action)
    }
  }
  refuseConflicts(actions)
  // "Update operators process document fields with string-based names in lexicographic order"
  // (manual: "Update Operators", Behavior), which decides where new fields go.
  return actions.sort((a, b) => comparePaths(a.target ?? a.parts, b.target ?? b.parts))
}

/** Two operators on one path, or on a path and its prefix, conflict (error 40). */
function refuseConflicts (actions: Action[]): void {
  const paths = actions.flatMap((a) => a.target === undefined ? [a.parts] : [a.parts, a.target])
  const seen = new Set<string>()
  // Shorter paths first, so that a prefix is seen before the paths under it.
  for (const parts of paths.sort((a, b) => a.length - b.length)) {
    for (let length = 1; length <= parts.length; length++) {
      const prefix = parts.slice(0, length).join('.')
      if (seen.has(prefix)) throw new CommandError(40, 'ConflictingUpdateOperators', `Updating the path '${parts.join('.')}' would create a conflict at '${prefix}'`)
    }
    seen.add(parts.join('.'))
  }
}

/** What one operator did, for the update description: fields set (path → value) and removed. */
interface Change { set: Array<[string[], unknown]>, removed: string[][] }

type Apply = (doc: Doc, action: Action, context: UpdateContext) => Change | undefined

const none = (): Change => ({ set: [], removed: [] })
const setField = (doc: Doc, parts: string[], value: unknown): Change => {
  const reported = setAt(doc, parts, value)
  return { set: [[reported, getAt(doc, reported)]], removed: [] }
}

type NumberLike = number | Long

function isNumberLike (value: unknown): value is NumberLike {
  return typeof value === 'number' || value instanceof Long
}

function arithmetic (op: '$inc' | '$mul', current: NumberLike, operand: NumberLike): NumberLike {
  if (typeof current === 'number' && typeof operand === 'number') return op === '$inc' ? current + operand : current * operand
  const integral = (n: NumberLike): boolean => n instanceof Long || Number.isInteger(n)
  if (!integral(current) || !integral(operand)) {
    return op === '$inc' ? Number(current) + Number(operand) : Number(current) * Number(operand)
  }
  const big = (n: NumberLike): bigint => n instanceof Long ? n.toBigInt() : BigInt(n)
  const result = op === '$inc' ? big(current) + big(operand) : big(current) * big(operand)
  if (result > 0x7fffffffffffffffn || result < -0x8000000000000000n) {
    throw new CommandError(2, 'BadValue', `Failed to apply ${op} operations to current value (${shown(current)}): the result overflows a 64-bit integer`)
  }
  return Long.fromBigInt(result)
}

function numeric (op: '$inc' | '$mul'): Apply {
  return (doc, { parts, operand }) => {
    const verb = op === '$inc' ? 'increment' : 'multiply'
    if (!isNumberLike(operand)) {
      const refused = typeName(operand) === 'decimal' ? 'the offline database does not do Decimal128 arithmetic: ' : ''
      throw new CommandError(14, 'TypeMismatch', `${refused}Cannot ${verb} with non-numeric argument: {${parts.join('.')}: ${shown(operand)}}`)
    }
    const current = getAt(doc, parts)
    if (current === undefined) return setField(doc, parts, op === '$inc' ? operand : (operand instanceof Long ? Long.ZERO : 0))
    if (!isNumberLike(current)) {
      throw new CommandError(14, 'TypeMismatch', `Cannot apply ${op} to a value of non-numeric type. {_id: ${shown(doc._id)}} has the field '${parts[parts.length - 1] as string}' of non-numeric type ${typeName(current)}`)
    }
    return setField(doc, parts, arithmetic(op, current, operand))
  }
}

function bound (keep: (order: number) => boolean): Apply {
  return (doc, { parts, operand }) => {
    const current = getAt(doc, parts)
    if (current !== undefined && !keep(compareValues(operand, current))) return none()
    return setField(doc, parts, cloneDeep(operand))
  }
}

function arrayAt (doc: Doc, parts: string[], op: string): unknown[] | undefined {
  const current = getAt(doc, parts)
  if (current === undefined || Array.isArray(current)) return current
  throw new CommandError(2, 'BadValue', `The field '${parts.join('.')}' must be an array but is of type ${typeName(current)} in document {_id: ${shown(doc._id)}} (${op})`)
}

interface PushSpec { each: unknown[], position?: number, slice?: number, sort?: unknown }

function readPush (operand: unknown): PushSpec {
  if (!isDocument(operand) || !('$each' in operand)) return { each: [operand] }
  const spec: PushSpec = { each: [] }
  for (const [key, value] of Object.entries(operand)) {
    const n = value instanceof Long ? value.toNumber() : value
    if (key === '$each') {
      if (!Array.isArray(value)) throw new CommandError(2, 'BadValue', `The argument to $each in $push must be an array but it was of type: ${typeName(value)}`)
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
  if (!isDocument(sort)) throw new CommandError(2, 'BadValue', 'The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields')
  return sortDocuments(elements as Doc[], parseSort(sort))
}

const push: Apply = (doc, { parts, operand }) => {
  const spec = readPush(operand)
  const current = arrayAt(doc, parts, '$push')
  const appended = cloneDeep(spec.each)
  let next = current === undefined ? [] : [...current]
  const at = spec.position === undefined ? next.length : spec.position < 0 ? Math.max(0, next.length + spec.position) : Math.min(spec.position, next.length)
  next.splice(at, 0, ...appended)
  if (spec.sort !== undefined) next = sortElements(next, spec.sort)
  if (spec.slice !== undefined) next = spec.slice >= 0 ? next.slice(0, spec.slice) : next.slice(spec.slice)
  const plainAppend = current !== undefined && spec.position === undefined && spec.sort === undefined && spec.slice === undefined
  if (!plainAppend) return setField(doc, parts, next)
  // An append is reported element by element ('tags.2'), the rest of the array unchanged.
  setAt(doc, parts, next)
  return { set: appended.map((value, i) => [[...parts, String(current.length + i)], value]), removed: [] }
}

const addToSet: Apply = (doc, { parts, operand }) => {
  const each = isDocument(operand) && Object.keys(operand)[0] === '$each' ? operand.$each : [operand]
  if (!Array.isArray(each)) throw new CommandError(2, 'BadValue', `The argument to $each in $addToSet must be an array but it was of type ${typeName(each)}`)
  const current = arrayAt(doc, parts, '$addToSet')
  const next = current === undefined ? [] : [...current]
  for (const value of each) if (!next.some((element) => valuesEqual(element, value))) next.push(cloneDeep(value))
  return setField(doc, parts, next)
}

/** The elements `$pull` removes: those matching a condition, a query on documents, or equal to a value (manual: "$pull"). */
function pullTest (operand: unknown): (element: unknown) => boolean {
  if (operand instanceof BSONRegExp || (isDocument(operand) && Object.keys(operand).some((key) => key.startsWith('$')))) {
    const test = compileFilter({ v: operand })
    return (element) => test({ v: element })
  }
  if (isDocument(operand)) {
    const test = compileFilter(operand)
    return (element) => isDocument(element) && test(element)
  }
  return (element) => valuesEqual(element, operand)
}

function removing (op: string, test: (operand: unknown) => (element: unknown) => boolean): Apply {
  return (doc, { parts, operand }) => {
    const current = arrayAt(doc, parts, op)
    if (current === undefined) return none()
    const matches = test(operand)
    return setField(doc, parts, current.filter((element) => !matches(element)))
  }
}

const pullAll = removing('$pullAll', (operand) => {
  if (!Array.isArray(operand)) throw new CommandError(2, 'BadValue', `$pullAll requires an array argument but was given a ${typeName(operand)}`)
  return (element) => operand.some((value) => valuesEqual(element, value))
})

const pop: Apply = (doc, { parts, operand }) => {
  const direction = operand instanceof Long ? operand.toNumber() : operand
  if (direction !== 1 && direction !== -1) throw new CommandError(9, 'FailedToParse', `$pop expects 1 or -1, found: ${shown(operand)}`)
  const current = arrayAt(doc, parts, '$pop')
  if (current === undefined || current.length === 0) return none()
  return setField(doc, parts, direction === 1 ? current.slice(0, -1) : current.slice(1))
}

const rename: Apply = (doc, { parts, target }) => {
  const to = target as string[]
  const from = parts.join('.')
  if (from === to.join('.')) throw new CommandError(2, 'BadValue', `The source and target field for $rename must differ: ${from}: "${to.join('.')}"`)
  if (crossesArray(doc, parts) || crossesArray(doc, to)) throw new CommandError(2, 'BadValue', `The source and target field for $rename cannot be an array element: ${from}`)
  const value = getAt(doc, parts)
  if (value === undefined) return none()
  unsetAt(doc, parts)
  const set = setField(doc, to, value)
  return { set: set.set, removed: [parts] }
}

const currentDate: Apply = (doc, { parts, operand }, { now }) => {
  if (typeof operand === 'boolean') return setField(doc, parts, new Date())
  const type = isDocument(operand) ? operand.$type : undefined
  if (type !== 'date' && type !== 'timestamp') {
    throw new CommandError(2, 'BadValue', "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}")
  }
  return setField(doc, parts, type === 'date' ? new Date() : now())
}

const unset: Apply = (doc, { parts }) => {
  const done = unsetAt(doc, parts)
  if (done === 'removed') return { set: [], removed: [parts] }
  return done === 'nulled' ? { set: [[parts, null]], removed: [] } : none()
}

const APPLY: Record<string, Apply> = {
  $set: (doc, { parts, operand }) => setField(doc, parts, cloneDeep(operand)),
  $setOnInsert: (doc, { parts, operand }, { inserting }) => inserting ? setField(doc, parts, cloneDeep(operand)) : undefined,
  $unset: unset,
  $inc: numeric('$inc'),
  $mul: numeric('$mul'),
  $min: bound((order) => order < 0),
  $max: bound((order) => order > 0),
  $rename: rename,
  $currentDate: currentDate,
  $push: push,
  $addToSet: addToSet,
  $pull: removing('$pull', pullTest),
  $pullAll: pullAll,
  $pop: pop
}

/**
 * Applies an update operator document to a copy of `doc`. `_id` may not change (error 66,
 * manual: "Field Order"/"_id Field"); a field left as it was is no change at all.
 */
export function applyOperators (doc: Doc, update: Doc, context: UpdateContext): UpdateOutcome {
  const actions = readActions(update)
  const next = cloneDeep(doc)
  const updated = new Map<string, unknown>()
  const removed: string[] = []
  for (const action of actions) {
    const watched = action.target === undefined ? [action.parts] : [action.parts, action.target]
    const before = watched.map((parts) => getAt(next, parts))
    const change = APPLY[action.op]?.(next, action, context)
    if (change === undefined || watched.every((parts, i) => bsonEqual(before[i], getAt(next, parts)))) continue
    for (const [parts, value] of change.set) updated.set(parts.join('.'), value)
    for (const parts of change.removed) removed.push(parts.join('.'))
  }
  if (!bsonEqual(doc._id, next._id) && !(context.inserting && doc._id === undefined)) {
    throw new CommandError(66, 'ImmutableField', "Performing an update on the path '_id' would modify the immutable field '_id'")
  }
  // A field created whole is reported once, not again for what was set inside it afterwards.
  const paths = [...updated.keys()]
  const updatedFields: Doc = {}
  for (const path of paths) {
    if (!paths.some((other) => path.startsWith(`${other}.`))) updatedFields[path] = updated.get(path)
  }
  return { doc: next, description: { updatedFields, removedFields: removed, truncatedArrays: [] }, changed: updated.size + removed.length > 0 }
}

/** A replacement document keeps the `_id` of the document it replaces (manual: "Replace a Document"). */
export function applyReplacement (doc: Doc, replacement: Doc): UpdateOutcome {
  const dollar = Object.keys(replacement).find((key) => key.startsWith('$'))
  if (dollar !== undefined) {
    throw new CommandError(52, 'DollarPrefixedFieldName', `The dollar ($) prefixed field '${dollar}' in '${dollar}' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.`)
  }
  if ('_id' in replacement && !bsonEqual(replacement._id, doc._id)) {
    throw new CommandError(66, 'ImmutableField', `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${shown(replacement._id)}`)
  }
  const { _id: _ignored, ...fields } = replacement
  const next: Doc = { _id: doc._id, ...cloneDeep(fields) }
  return { doc: next, description: { updatedFields: {}, removedFields: [], truncatedArrays: [] }, changed: !bsonEqual(doc, next) }
}
