import { textNode, type FilterNode } from './filter-tree.js'
import { childPointer, type Problems } from './problems.js'
import type { RawListParams } from './query-string.js'

const LIST_OPERATORS = new Set(['$in', '$nin', '$all'])

/**
 * `filter[f]=v` and `filter[f][$op]=v` become the same tree as `filter={"f":…}`;
 * `$in`, `$nin` and `$all` values are comma-separated lists, their items trimmed.
 */
export function bracketTree (brackets: RawListParams['brackets'], problems: Problems): FilterNode {
  const fields = new Map<string, FilterNode>()
  for (const { field, operator, value } of brackets) {
    const existing = fields.get(field)
    if (operator === undefined) {
      if (existing === undefined) fields.set(field, textNode(value))
      else problems.add('filter', childPointer('', field), 'DUPLICATE_KEY', `'${field}' has both a value and operators; use filter[${field}][$eq]`)
      continue
    }
    const operand: FilterNode = LIST_OPERATORS.has(operator)
      // `music, dance` means `music` and `dance`: items are trimmed (JSON keeps spaces that matter).
      ? { type: 'array', items: value.split(',').map((item) => textNode(item.trim())) }
      : textNode(value)
    if (existing === undefined) fields.set(field, { type: 'object', entries: [[operator, operand]] })
    else if (existing.type === 'object') existing.entries.push([operator, operand])
    else problems.add('filter', childPointer('', field), 'DUPLICATE_KEY', `'${field}' has both a value and operators; use filter[${field}][$eq]`)
  }
  return { type: 'object', entries: [...fields] }
}
