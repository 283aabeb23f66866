import type { FieldKind } from '../schemas/fields.js'

/** The thirteen operators of the filter language. */
export const OPERATORS = [
  '$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$regex', '$options', '$exists', '$all', '$size'
] as const
export type Operator = typeof OPERATORS[number]

/** One element of an array satisfies every condition inside (docs/query-language.md, "One element"). */
export const ELEM_MATCH = '$elemMatch'

/** Rejected anywhere in a filter, for security (docs/query-language.md). */
export const BLOCKED_OPERATORS: ReadonlySet<string> = new Set(['$where', '$near', '$geoWithin', '$geoIntersects'])

const COMPARISON = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'] as const
const EQUALITY = ['$eq', '$ne', '$in', '$nin', '$exists'] as const

/** docs/query-language.md: the operators each field type accepts. */
export const OPERATORS_BY_KIND: Record<FieldKind, ReadonlySet<Operator>> = {
  string: new Set([...COMPARISON, '$regex', '$options']),
  number: new Set(COMPARISON),
  date: new Set(COMPARISON),
  boolean: new Set(EQUALITY),
  ref: new Set(EQUALITY),
  'string[]': new Set([...EQUALITY, '$all', '$size', '$regex', '$options']),
  'ref[]': new Set([...EQUALITY, '$all', '$size']),
  custom: new Set(OPERATORS),
  // Not in the contract's table: an array of embedded documents can only be tested for presence and length.
  'object[]': new Set(['$exists', '$size'])
}

/** The array kinds `$elemMatch` applies to, and for arrays of scalars the kind of their elements. */
export const ELEMENT_KIND: Partial<Record<FieldKind, FieldKind>> = {
  'string[]': 'string', 'ref[]': 'ref', 'object[]': 'object[]'
}

/**
 * Inside `$elemMatch` on an array of scalars: the element type's own operators. Its `$exists` holds for every
 * element, as in MongoDB (ExistsMatchExpression): true asks for one element, false matches nothing.
 */
export const ELEMENT_OPERATORS: Partial<Record<FieldKind, ReadonlySet<Operator>>> = {
  string: OPERATORS_BY_KIND.string,
  ref: OPERATORS_BY_KIND.ref
}

/** docs/query-language.md: `_id` also takes the range operators (ObjectIds order by creation time). */
export const ID_OPERATORS: ReadonlySet<Operator> = new Set(COMPARISON)

export const isOperator = (key: string): key is Operator => (OPERATORS as readonly string[]).includes(key)
