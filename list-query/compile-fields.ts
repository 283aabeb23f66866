import { childPointer, type Problems } from './problems.js'
import { CUSTOM_FIELD_NAME, hasForbiddenSegment, nearest, type QuerySpec } from './query-spec.js'

/**
 * `fields=name,start` → the declared top-level fields asked for (docs/query-language.md):
 * `_id` may be named and is always returned; `customFields` and `customFields.<name>` too.
 */
export function compileFields (text: string | undefined, spec: QuerySpec, problems: Problems): string[] | undefined {
  if (text === undefined) return undefined
  const fields: string[] = []
  text.split(',').forEach((item, index) => {
    const pointer = childPointer('', index)
    const problem = fieldProblem(item, spec)
    if (problem !== undefined) {
      problems.add('fields', pointer, 'INVALID_FIELDS', problem)
    } else if (fields.includes(item)) {
      problems.add('fields', pointer, 'INVALID_FIELDS', `'${item}' appears more than once in fields`)
    } else {
      fields.push(item)
    }
  })
  return fields
}

function fieldProblem (item: string, spec: QuerySpec): string | undefined {
  if (item.length === 0) return 'Empty item in fields: write field names separated by commas, such as fields=name,start'
  if (spec.returnable.includes(item)) return undefined
  if (hasForbiddenSegment(item)) {
    return `Unknown field '${item}' in fields: '__proto__', 'constructor' and 'prototype' name no field`
  }
  const dot = item.indexOf('.')
  if (dot > 0 && spec.hasCustomFields && item.slice(0, dot) === 'customFields' &&
    CUSTOM_FIELD_NAME.test(item.slice(dot + 1))) return undefined
  const head = dot > 0 ? item.slice(0, dot) : item
  if (dot > 0 && spec.returnable.includes(head)) {
    return `'${item}' reaches inside '${head}': fields names whole top-level fields` +
      `${spec.references.has(head) || head === spec.scopeField ? ' (related objects cannot be expanded)' : ''}`
  }
  const best = nearest(item, spec.returnable)
  return `Unknown field '${item}' in fields${best === undefined ? '' : `; did you mean '${best}'?`}`
}
