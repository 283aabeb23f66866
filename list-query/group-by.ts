// What `by` of a list's counts accepts (docs/counts.md): derived from the same QuerySpec as the
// filter, so that one declaration of a kind says what can be filtered, sorted and grouped.
import type { FieldKind } from '../schemas/fields.js'
import { CUSTOM_FIELD_NAME, hasForbiddenSegment, nearest, type QuerySpec } from './query-spec.js'

/** Dates are grouped by a period of UTC time. */
export const DATE_UNITS = ['day', 'month', 'year'] as const
export type DateUnit = typeof DATE_UNITS[number]

/** One group key: the field, the array whose elements are unwound first, the period of a date. */
export interface GroupBy {
  /** As written: `role`, `start:day`, `customFields.level`. */
  text: string
  path: string
  /** The kind of one value (an element's kind for arrays). */
  kind: 'string' | 'number' | 'boolean' | 'ref' | 'date' | 'custom'
  /** The top-level array whose elements are counted one by one (`tags`, `sessionsSubscriptions`). */
  unwind?: string
  unit?: DateUnit
}

const ELEMENT: Partial<Record<FieldKind, GroupBy['kind']>> = {
  string: 'string', number: 'number', boolean: 'boolean', ref: 'ref', date: 'date', 'string[]': 'string', 'ref[]': 'ref'
}

/** Every `by` a list accepts, in the spec's order; `customFields.<name>` stands for any custom field. */
export function groupablePaths (spec: QuerySpec): string[] {
  const paths: string[] = []
  for (const field of spec.fields.values()) {
    const kind = ELEMENT[field.kind]
    if (kind === undefined || field.path === '_id') continue
    if (kind === 'date') for (const unit of DATE_UNITS) paths.push(`${field.path}:${unit}`)
    else paths.push(field.path)
  }
  if (spec.hasCustomFields) paths.push('customFields.<name>')
  return paths
}

/** The group of `text`, or why it is none (INVALID_GROUP's message). */
export function resolveGroup (spec: QuerySpec, text: string): GroupBy | { problem: string } {
  const [path = '', unit, ...rest] = text.split(':')
  const refuse = (why: string): { problem: string } =>
    ({ problem: `${why}; by takes one of ${groupablePaths(spec).join(', ')}` })
  if (text === '') return refuse('by is empty')
  if (rest.length > 0 || hasForbiddenSegment(path)) return refuse(`'${text}' is not a path to group by`)
  if (spec.hasCustomFields && path.startsWith('customFields.') &&
    CUSTOM_FIELD_NAME.test(path.slice('customFields.'.length))) {
    return unit === undefined ? { text, path, kind: 'custom' } : refuse(`'${path}' is a custom field: it takes no unit`)
  }
  const field = spec.fields.get(path)
  const kind = field === undefined || path === '_id' ? undefined : ELEMENT[field.kind]
  if (field === undefined || kind === undefined) {
    if (path === spec.scopeField) return refuse(`'${path}' is fixed by the URL path`)
    const near = field === undefined
      ? nearest(path, groupablePaths(spec).filter((p) => !p.includes('<')).map((p) => p.split(':')[0] as string))
      : undefined
    return refuse(`'${path}' cannot be grouped by${near === undefined ? '' : ` (did you mean '${near}'?)`}`)
  }
  if (kind === 'date') {
    if (unit === undefined) {
      return refuse(`'${path}' is a date: group it by a period, as ${path}:day, ${path}:month or ${path}:year (UTC)`)
    }
    if (!(DATE_UNITS as readonly string[]).includes(unit)) {
      const given = unit === ''
        ? `'${text}' names no unit after the colon`
        : `'${unit}' is not a unit to group '${path}' by`
      const units = `${DATE_UNITS.slice(0, -1).join(', ')} and ${DATE_UNITS.at(-1) as string}`
      return refuse(`${given}: the units are ${units} (UTC), as ${path}:${DATE_UNITS[0]}`)
    }
  } else if (unit !== undefined) {
    return refuse(`'${path}' is not a date: it takes no unit`)
  }
  const dot = path.indexOf('.')
  const unwind = field.kind.endsWith('[]')
    ? path
    : dot > 0 && spec.fields.get(path.slice(0, dot))?.kind === 'object[]' ? path.slice(0, dot) : undefined
  return {
    text,
    path,
    kind,
    ...(unwind === undefined ? {} : { unwind }),
    ...(unit === undefined ? {} : { unit: unit as DateUnit })
  }
}
