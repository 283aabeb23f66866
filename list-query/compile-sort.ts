import { childPointer, type Problems } from './problems.js'
import { resolvePath, type QuerySpec } from './query-spec.js'

export const MAX_SORT_FIELDS = 5

export type SortSpec = Record<string, 1 | -1>

/**
 * `+a,-b` → `{ a: 1, b: -1, _id: 1 }`. A raw `+` arrives as a space and counts as `+`;
 * `_id` always ends the sort, so that pages never overlap or skip.
 */
export function compileSort (text: string | undefined, spec: QuerySpec, problems: Problems): SortSpec {
  const sort: SortSpec = {}
  if (text === undefined) return { _id: 1 }
  const items = text.split(',')
  if (items.length > MAX_SORT_FIELDS) {
    problems.add(
      'sort', childPointer('', MAX_SORT_FIELDS), 'INVALID_SORT',
      `sort takes at most ${MAX_SORT_FIELDS} fields, not ${items.length}`
    )
  }
  items.slice(0, MAX_SORT_FIELDS).forEach((item, index) => {
    const pointer = childPointer('', index)
    const prefix = item[0]
    const path = item.slice(1)
    if (item.length === 0) {
      problems.add('sort', pointer, 'INVALID_SORT', 'Empty sort item: write +field or -field, separated by commas')
      return
    }
    if (prefix !== '+' && prefix !== ' ' && prefix !== '-') {
      // Both mistakes at once: a field that does not exist is said now, not after the sign is fixed.
      const named = resolvePath(spec, item, 'sort')
      const also = 'field' in named ? '' : `; and ${named.message.charAt(0).toLowerCase()}${named.message.slice(1)}`
      problems.add(
        'sort', pointer, 'INVALID_SORT',
        `'${item}' needs a direction: +${item} (ascending, %2B in a URL) or -${item} (descending)${also}`
      )
      return
    }
    const spaced = spacing(item)
    if (spaced !== undefined) {
      problems.add('sort', pointer, 'INVALID_SORT', spaced)
      return
    }
    const resolved = resolvePath(spec, path, 'sort')
    if (!('field' in resolved)) {
      problems.add('sort', pointer, 'INVALID_SORT', resolved.message)
      return
    }
    if (!resolved.field.sortable) {
      problems.add('sort', pointer, 'INVALID_SORT', `'${path}' is an array field and cannot be sorted on`)
      return
    }
    if (path in sort) {
      problems.add('sort', pointer, 'INVALID_SORT', `'${path}' appears more than once in sort`)
      return
    }
    sort[path] = prefix === '-' ? -1 : 1
  })
  if (!('_id' in sort)) sort._id = 1
  return sort
}

/**
 * An item with a space after its first character: a raw `+` arrives as a space, so `+name, -start` reads
 * `' -start'` (a `+` then `-start`). What was written is said, not an unknown field `-start`.
 */
function spacing (item: string): string | undefined {
  const [prefix, path] = [item.charAt(0), item.slice(1)]
  const signed = prefix === ' ' && (path.startsWith('+') || path.startsWith('-'))
  if (!signed && !path.includes(' ')) return undefined
  const name = path.replaceAll(' ', '')
  const arrives = "a '+' written in a URL arrives as a space"
  if (name === '' || name === '+' || name === '-') {
    return `Sort item '${item}' names no field (${arrives}): write +field or -field, and a '+' as %2B`
  }
  if (signed) {
    return `Sort item '${item}' begins with a space, which is how a '+' written in a URL arrives: it reads as '+' ` +
      `then '${path}'. Write ${name} with no space before it (and a '+' as %2B)`
  }
  const sign = prefix === '-' ? '-' : '+'
  const field = /^[+-]/.test(name) ? name.slice(1) : name
  return `Sort item '${item}' holds a space (${arrives}): write ${sign}${field} with no space (and a '+' as %2B)`
}
