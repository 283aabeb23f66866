/**
 * The one internal form of a filter, whichever notation it came in. Objects keep their
 * entries in order (JSON duplicate keys are rejected while parsing); `fromText` marks bracket
 * values, which arrive as text and are converted by the field's type.
 */
export type FilterNode =
  | { type: 'object', entries: Array<[string, FilterNode]> }
  | { type: 'array', items: FilterNode[] }
  | { type: 'string', value: string, fromText: boolean }
  | { type: 'number', value: number }
  | { type: 'boolean', value: boolean }
  | { type: 'null' }

export const textNode = (value: string): FilterNode => ({ type: 'string', value, fromText: true })
