// The operand of `$size`: how many elements an array has, at most MAX_SIZE (2^31 - 1). A bracket
// value, which arrives as text, is the JSON number its text writes, as a bracket number is for a
// number field: both notations agree (`1.0`, `1e2` and `-0` are numbers without a fraction; `01`
// and `+1` are no JSON numbers).
import { exactNumber } from './exact-number.js'
import type { FilterNode } from './filter-tree.js'

export const MAX_SIZE = 2 ** 31 - 1
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/** The number of elements `node` asks for; undefined when it is none. */
export function size (node: FilterNode): number | undefined {
  const n = node.type === 'number'
    ? node.value
    : node.type === 'string' && node.fromText && JSON_NUMBER.test(node.value) ? exactNumber(node.value) ?? NaN : NaN
  // -0 is 0.
  return Number.isInteger(n) && n >= 0 && n <= MAX_SIZE ? n + 0 : undefined
}

/** Why `node` is not a `$size`: the bound, and what was given. */
export function sizeMessage (node: FilterNode): string {
  const bound = `$size takes a non-negative integer up to ${MAX_SIZE}`
  switch (node.type) {
    case 'string': return `${bound}, not '${node.value}'`
    case 'number': case 'boolean': return `${bound}, not ${String(node.value)}`
    case 'null': return `${bound}, not null`
    default: return `${bound}, not an ${node.type}`
  }
}
