/**
 * The one internal form of a filter, whichever notation it came in. Objects keep their
 * entries in order (JSON duplicate keys are rejected while parsing); `refused` marks an object
 * whose keys the reader refused and left out (each reported where it stands), so that it is not
 * also called empty; `fromText` marks bracket values, which arrive as text and are converted by
 * the field's type.
 */
export type FilterNode =
  | { type: 'object', entries: Array<[string, FilterNode]>, refused?: true }
  | { type: 'array', items: FilterNode[] }
  | { type: 'string', value: string, fromText: boolean }
  | { type: 'number', value: number }
  | { type: 'boolean', value: boolean }
  | { type: 'null' }

export const textNode = (value: string): FilterNode => ({ type: 'string', value, fromText: true })

/** An object left empty by the keys the reader refused: their problems are said, not its emptiness. */
export const emptiedByRefusals = (node: FilterNode): boolean =>
  node.type === 'object' && node.entries.length === 0 && node.refused === true
