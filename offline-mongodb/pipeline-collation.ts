// The stages mingo runs, under a collation: mingo compares strings in binary whatever the
// collation, so a stage or expression that compares values is refused rather than answered
// wrongly, and `$group` groups string keys equal under the collation itself, as mongod does
// (manual: "$group", "Collation": the collation applies to the whole pipeline).
import { Aggregator } from 'mingo/aggregator'
import { compareValues, isDocument } from './bson-order.js'
import type { Collation } from './collator.js'
import { CommandError } from './errors.js'
import { queryContext } from './query-operators.js'
import type { Doc } from './storage.js'

/** Expression operators and accumulators whose answer depends on how strings compare. */
const COMPARING = new Set([
  '$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$cmp', '$in', '$indexOfArray', '$setEquals', '$setIntersection',
  '$setUnion', '$setDifference', '$setIsSubset', '$min', '$max', '$minN', '$maxN', '$sortArray', '$addToSet',
  '$top', '$topN', '$bottom', '$bottomN'
])

/** mingo stages that only compute new fields: safe under a collation once their expressions compare nothing. */
const COMPUTING_STAGES = new Set([
  '$addFields', '$set', '$project', '$unset', '$replaceRoot', '$replaceWith', '$redact'
])

function unsupported (what: string): CommandError {
  return new CommandError(2, 'BadValue', `the offline database does not support ${what} with a collation`)
}

/**
 * `{$in: [{$type: …}, ["string", …]]}` or `{$eq: [{$type: …}, "date"]}`: `$type` answers a
 * type's name, and no two names are equal under any collation, so the answer is the same in all.
 */
function comparesTypeNames (operator: string, operands: unknown): boolean {
  if ((operator !== '$in' && operator !== '$eq') || !Array.isArray(operands) || operands.length !== 2) return false
  const [typed, names] = operands as [unknown, unknown]
  if (!isDocument(typed) || Object.keys(typed).length !== 1 || !('$type' in typed) ||
    comparingOperator(typed.$type) !== undefined) return false
  return operator === '$in'
    ? Array.isArray(names) && names.every((name) => typeof name === 'string')
    : typeof names === 'string'
}

/**
 * `{$gt: [<expression>, -Infinity]}`: an order against a number or boolean constant. Values of
 * another type compare by their type's place in the sort order (expression-operators.ts), numbers
 * by value: two strings never meet, so the collation cannot change the answer (manual:
 * "Comparison/Sort Order").
 */
function comparesWithConstant (operator: string, operands: unknown): boolean {
  if (!['$gt', '$gte', '$lt', '$lte'].includes(operator) || !Array.isArray(operands) ||
    operands.length !== 2) return false
  const constant = operands.findIndex((operand) => typeof operand === 'number' || typeof operand === 'boolean')
  return constant >= 0 && comparingOperator(operands[1 - constant]) === undefined
}

/** The first operator of `expression` (at any depth) that compares values, if any. */
function comparingOperator (expression: unknown): string | undefined {
  if (Array.isArray(expression)) {
    for (const item of expression) {
      const found = comparingOperator(item)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (!isDocument(expression)) return undefined
  for (const [key, value] of Object.entries(expression)) {
    if (COMPARING.has(key) && !comparesTypeNames(key, value) && !comparesWithConstant(key, value)) return key
    const found = comparingOperator(value)
    if (found !== undefined) return found
  }
  return undefined
}

/** Refuses a stage mingo would run under the collation when its answer could depend on it. */
export function checkStageUnderCollation (name: string, spec: unknown): void {
  if (!COMPUTING_STAGES.has(name) && name !== '$group') throw unsupported(name)
  const operator = comparingOperator(spec)
  if (operator !== undefined) throw unsupported(`${operator} in ${name}`)
}

const OPTIONS = { context: queryContext, scriptEnabled: false }

/**
 * `$group` under a collation: documents whose keys are equal under it (strings inside documents
 * and arrays too) form one group, whose `_id` is the key of its first document; the
 * accumulators, none of which compares values (checkStageUnderCollation), run per group in
 * input order.
 */
export function groupUnderCollation (docs: Doc[], spec: unknown, collation: Collation): Doc[] {
  checkStageUnderCollation('$group', spec)
  if (!isDocument(spec) || !('_id' in spec)) {
    throw new CommandError(15955, 'Location15955', 'a group specification must include an _id')
  }
  const { _id: idExpression, ...accumulators } = spec
  const keyOf = new Aggregator([{ $group: { _id: idExpression } }], OPTIONS)
  const groups: Array<{ key: unknown, docs: Doc[] }> = []
  for (const doc of docs) {
    const key = (keyOf.run([doc])[0] as Doc | undefined)?._id ?? null
    let group = groups.find((g) => compareValues(g.key, key, collation.compare) === 0)
    if (group === undefined) {
      group = { key, docs: [] }
      groups.push(group)
    }
    group.docs.push(doc)
  }
  const accumulate = new Aggregator([{ $group: { _id: null, ...accumulators } }], OPTIONS)
  return groups.map(({ key, docs: members }) => {
    const { _id: _null, ...values } = accumulate.run(members)[0] as Doc
    return { _id: key, ...values }
  })
}
