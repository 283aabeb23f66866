import { textNode, type FilterNode } from './filter-tree.js'
import { MAX_BRANCHES } from './limits.js'
import { ELEM_MATCH } from './operators.js'
import { childPointer, type Problems } from './problems.js'
import type { RawListParams } from './query-string.js'

const LIST_OPERATORS = new Set(['$in', '$nin', '$all'])
const INDEX = /^(?:0|[1-9][0-9]*)$/

type Bracket = RawListParams['brackets'][number]

/**
 * A filter object being built: its entries in order; a `$or`/`$and` holds its branches by index;
 * `elemMatch` holds, per field, the brackets that continue after `[$elemMatch]`.
 */
interface Draft { entries: Map<string, FilterNode | Map<number, Draft>>, elemMatch: Map<string, Bracket[]> }

const draft = (): Draft => ({ entries: new Map(), elemMatch: new Map() })

/**
 * `filter[f]=v` and `filter[f][$op]=v` become the same tree as `filter={"f":…}`;
 * `$in`, `$nin` and `$all` values are comma-separated lists, their items trimmed.
 * `filter[$or][0][f]=v` writes branch 0 of `$or` (`$and` alike, nested as in JSON): indexes
 * run from 0 without gaps, so that pointers name the same branch in both notations.
 */
export function bracketTree (brackets: RawListParams['brackets'], problems: Problems): FilterNode {
  return draftTree(brackets, '', false, problems)
}

/**
 * The tree of brackets at `base`: the filter itself, or (`element`) the inside of a field's
 * `[$elemMatch]`, where a `$` key without a field is an operator on one element of an array of
 * scalars (`filter[tags][$elemMatch][$regex]=^yo`).
 */
function draftTree (brackets: Bracket[], base: string, element: boolean, problems: Problems): FilterNode {
  const root = draft()
  for (const bracket of brackets) {
    const { key, segments, value } = bracket
    let at = root
    let pointer = base
    let i = 0
    let placed = true
    while (i < segments.length && (segments[i] === '$or' || segments[i] === '$and')) {
      const operator = segments[i] as string
      const arrayPointer = childPointer(pointer, operator)
      const index = segments[i + 1]
      const existing = at.entries.get(operator)
      if (index === undefined && existing === undefined) {
        // filter[$or]=x: a value where branches belong; the compiler says what $or takes.
        at.entries.set(operator, textNode(value))
        placed = false
        break
      }
      if (index === undefined || (existing !== undefined && !(existing instanceof Map))) {
        problems.add('filter', arrayPointer, 'DUPLICATE_KEY', `'${operator}' has both a value and branches; ` +
          `write branches as filter[${operator}][0][<field>]=…`)
        placed = false
        break
      }
      if (!INDEX.test(index) || Number(index) >= MAX_BRANCHES) {
        problems.add('filter', arrayPointer, 'INVALID_VALUE', `In '${key}', '${index}' is not a branch of ` +
          `${operator}: branches are numbered from 0 to ${MAX_BRANCHES - 1}, as in filter[${operator}][0][name]=Yoga`)
        placed = false
        break
      }
      const branches = existing ?? new Map<number, Draft>()
      at.entries.set(operator, branches)
      let branch = branches.get(Number(index))
      if (branch === undefined) branches.set(Number(index), branch = draft())
      at = branch
      pointer = childPointer(arrayPointer, index)
      i += 2
    }
    if (!placed) continue
    const [field, operator, ...beyond] = segments.slice(i)
    if (field !== undefined && operator === ELEM_MATCH && beyond.length > 0 && !field.startsWith('$')) {
      const inner = at.elemMatch.get(field) ?? []
      at.elemMatch.set(field, inner)
      inner.push({ ...bracket, segments: beyond })
      continue
    }
    if (field === undefined) {
      problems.add('filter', pointer, 'INVALID_VALUE', `'${key}' gives a branch a value: ` +
        `a branch holds conditions, as in ${key}[name]=Yoga`)
      continue
    }
    // A `$` key other than $or/$and (`filter[$nor][0][name]`): the compiler names it, whatever follows.
    if (beyond.length > 0 && !field.startsWith('$')) {
      problems.add(key, '', 'UNKNOWN_PARAMETER', `Unknown parameter '${key}': a bracket names a field and at most ` +
        'one operator, as in filter[name][$regex]=yoga')
      continue
    }
    const existing = at.entries.get(field)
    if (field.startsWith('$')) {
      // Inside $elemMatch a `$` key is the operator itself: nothing may follow it.
      if (element && operator !== undefined) {
        problems.add(key, '', 'UNKNOWN_PARAMETER', `Unknown parameter '${key}': inside $elemMatch a bracket names ` +
          'one operator or a field and one operator, as in filter[tags][$elemMatch][$regex]=^yo')
      } else if (existing === undefined) {
        // Given twice only as an unknown operator with branches (`filter[$nor][0]…&filter[$nor][1]…`): the
        // compiler names it.
        at.entries.set(field, element && LIST_OPERATORS.has(field) ? listNode(value) : textNode(value))
      }
      continue
    }
    if (existing instanceof Map || (existing !== undefined && (operator === undefined || existing.type !== 'object'))) {
      problems.add('filter', childPointer(pointer, field), 'DUPLICATE_KEY', `'${field}' has both a value ` +
        `and operators; use filter[${field}][$eq]`)
      continue
    }
    if (operator === undefined) {
      at.entries.set(field, textNode(value))
      continue
    }
    const operand: FilterNode = LIST_OPERATORS.has(operator) ? listNode(value) : textNode(value)
    if (existing === undefined) at.entries.set(field, { type: 'object', entries: [[operator, operand]] })
    else if (existing.type === 'object') existing.entries.push([operator, operand])
  }
  return toNode(root, base, problems)
}

// `music, dance` means `music` and `dance`: items are trimmed (JSON keeps spaces that matter).
const listNode = (value: string): FilterNode =>
  ({ type: 'array', items: value.split(',').map((item) => textNode(item.trim())) })

/** The tree of a draft; branches whose indexes leave a gap are reported and left out. */
function toNode (at: Draft, pointer: string, problems: Problems): FilterNode {
  const entries: Array<[string, FilterNode]> = []
  for (const [key, value] of at.entries) {
    if (!(value instanceof Map)) {
      entries.push([key, value])
      continue
    }
    const arrayPointer = childPointer(pointer, key)
    const indexes = [...value.keys()].sort((a, b) => a - b)
    if (indexes.some((index, i) => index !== i)) {
      problems.add('filter', arrayPointer, 'INVALID_VALUE', `The branches of ${key} are numbered ` +
        `from 0 without gaps; given: ${indexes.join(', ')}`)
      continue
    }
    entries.push([key, {
      type: 'array',
      items: indexes.map((index) => toNode(value.get(index) as Draft, childPointer(arrayPointer, index), problems))
    }])
  }
  for (const [field, inner] of at.elemMatch) {
    const fieldPointer = childPointer(pointer, field)
    const before = problems.items.length
    const operand = draftTree(inner, childPointer(fieldPointer, ELEM_MATCH), true, problems)
    // Brackets refused inside leave it empty: their problems say so, not one of an empty $elemMatch.
    if (operand.type === 'object' && operand.entries.length === 0 && problems.items.length > before) continue
    const existing = entries.find(([key]) => key === field)
    if (existing === undefined) {
      entries.push([field, { type: 'object', entries: [[ELEM_MATCH, operand]] }])
    } else if (existing[1].type === 'object' && !existing[1].entries.some(([key]) => key === ELEM_MATCH)) {
      existing[1].entries.push([ELEM_MATCH, operand])
    } else {
      problems.add('filter', fieldPointer, 'DUPLICATE_KEY', `'${field}' has both a value and $elemMatch conditions; ` +
        `use filter[${field}][$eq]`)
    }
  }
  return { type: 'object', entries }
}
