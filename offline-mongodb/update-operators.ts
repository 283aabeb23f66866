// Update operator documents (manual: "Update Operators"), applied to a copy of the document, with
// the change described as a change stream's `updateDescription` reports it.
import { Long } from 'bson'
import { compareValues, isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import type { UpdateDescription } from './oplog.js'
import type { Doc } from './storage.js'
import { addToSet, pop, pullAll, pullTest, push, removing } from './update-array-operators.js'
import { none, setField, shown, typeName, type Action, type Apply, type UpdateContext } from './update-apply.js'
import { bsonEqual, cloneDeep, comparePaths, crossesArray, getAt, parseUpdatePath, unsetAt } from './update-paths.js'

export interface UpdateOutcome { doc: Doc, description: UpdateDescription, changed: boolean }

/** Operators mongod has that the stand-in refuses rather than approximates. */
const REFUSED = new Set(['$bit'])

export function isOperatorUpdate (update: Doc): boolean {
  return Object.keys(update)[0]?.startsWith('$') ?? false
}

function readActions (update: Doc): Action[] {
  const actions: Action[] = []
  for (const [op, fields] of Object.entries(update)) {
    if (REFUSED.has(op)) {
      throw new CommandError(9, 'FailedToParse', `the offline database does not support the update modifier ${op}`)
    }
    if (!Object.hasOwn(APPLY, op)) {
      throw new CommandError(9, 'FailedToParse', `Unknown modifier: ${op}. ` +
        'Expected a valid update modifier or pipeline-style update specified as an array')
    }
    if (!isDocument(fields)) {
      throw new CommandError(9, 'FailedToParse',
        `Modifiers operate on fields but we found type ${typeName(fields)} instead. ` +
        `For example: {$mod: {<field>: ...}} not {${op}: ${shown(fields)}}`)
    }
    for (const [path, operand] of Object.entries(fields)) {
      const action: Action = { op, parts: parseUpdatePath(path), operand }
      if (op === '$rename') {
        if (typeof operand !== 'string') {
          throw new CommandError(2, 'BadValue',
            `The 'to' field for $rename must be a string: ${path}: ${shown(operand)}`)
        }
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
      if (seen.has(prefix)) {
        throw new CommandError(40, 'ConflictingUpdateOperators',
          `Updating the path '${parts.join('.')}' would create a conflict at '${prefix}'`)
      }
    }
    seen.add(parts.join('.'))
  }
}

type NumberLike = number | Long

function isNumberLike (value: unknown): value is NumberLike {
  return typeof value === 'number' || value instanceof Long
}

function arithmetic (op: '$inc' | '$mul', current: NumberLike, operand: NumberLike): NumberLike {
  if (typeof current === 'number' && typeof operand === 'number') {
    return op === '$inc' ? current + operand : current * operand
  }
  const integral = (n: NumberLike): boolean => n instanceof Long || Number.isInteger(n)
  if (!integral(current) || !integral(operand)) {
    return op === '$inc' ? Number(current) + Number(operand) : Number(current) * Number(operand)
  }
  const big = (n: NumberLike): bigint => n instanceof Long ? n.toBigInt() : BigInt(n)
  const result = op === '$inc' ? big(current) + big(operand) : big(current) * big(operand)
  if (result > 0x7fffffffffffffffn || result < -0x8000000000000000n) {
    throw new CommandError(2, 'BadValue',
      `Failed to apply ${op} operations to current value (${shown(current)}): the result overflows a 64-bit integer`)
  }
  return Long.fromBigInt(result)
}

function numeric (op: '$inc' | '$mul'): Apply {
  return (doc, { parts, operand }) => {
    const verb = op === '$inc' ? 'increment' : 'multiply'
    if (!isNumberLike(operand)) {
      const refused = typeName(operand) === 'decimal' ? 'the offline database does not do Decimal128 arithmetic: ' : ''
      throw new CommandError(14, 'TypeMismatch',
        `${refused}Cannot ${verb} with non-numeric argument: {${parts.join('.')}: ${shown(operand)}}`)
    }
    const current = getAt(doc, parts)
    if (current === undefined) {
      return setField(doc, parts, op === '$inc' ? operand : (operand instanceof Long ? Long.ZERO : 0))
    }
    if (!isNumberLike(current)) {
      throw new CommandError(14, 'TypeMismatch', `Cannot apply ${op} to a value of non-numeric type. ` +
        `{_id: ${shown(doc._id)}} has the field '${parts[parts.length - 1] as string}' ` +
        `of non-numeric type ${typeName(current)}`)
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

const rename: Apply = (doc, { parts, target }) => {
  const to = target as string[]
  const from = parts.join('.')
  if (from === to.join('.')) {
    throw new CommandError(2, 'BadValue',
      `The source and target field for $rename must differ: ${from}: "${to.join('.')}"`)
  }
  if (crossesArray(doc, parts) || crossesArray(doc, to)) {
    throw new CommandError(2, 'BadValue', `The source and target field for $rename cannot be an array element: ${from}`)
  }
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
    throw new CommandError(2, 'BadValue', "The '$type' string field is required to be 'date' or 'timestamp': " +
      "{$currentDate: {field : {$type: 'date'}}}")
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
  $setOnInsert: (doc, { parts, operand }, { inserting }) => inserting
    ? setField(doc, parts, cloneDeep(operand))
    : undefined,
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
    throw new CommandError(66, 'ImmutableField',
      "Performing an update on the path '_id' would modify the immutable field '_id'")
  }
  // A field created whole is reported once, not again for what was set inside it afterwards.
  const paths = [...updated.keys()]
  const updatedFields: Doc = {}
  for (const path of paths) {
    if (!paths.some((other) => path.startsWith(`${other}.`))) updatedFields[path] = updated.get(path)
  }
  return {
    doc: next,
    description: { updatedFields, removedFields: removed, truncatedArrays: [] },
    changed: updated.size + removed.length > 0
  }
}

/** A replacement document keeps the `_id` of the document it replaces (manual: "Replace a Document"). */
export function applyReplacement (doc: Doc, replacement: Doc): UpdateOutcome {
  const dollar = Object.keys(replacement).find((key) => key.startsWith('$'))
  if (dollar !== undefined) {
    throw new CommandError(52, 'DollarPrefixedFieldName', `The dollar ($) prefixed field '${dollar}' in '${dollar}' ` +
      "is not allowed in the context of an update's replacement document. " +
      'Consider using an aggregation pipeline with $replaceWith.')
  }
  if ('_id' in replacement && !bsonEqual(replacement._id, doc._id)) {
    throw new CommandError(66, 'ImmutableField', 'After applying the update, the (immutable) field ' +
      `'_id' was found to have been altered to _id: ${shown(replacement._id)}`)
  }
  const { _id: _ignored, ...fields } = replacement
  const next: Doc = { _id: doc._id, ...cloneDeep(fields) }
  return {
    doc: next,
    description: { updatedFields: {}, removedFields: [], truncatedArrays: [] },
    changed: !bsonEqual(doc, next)
  }
}
