// The filter language of one list as JSON Schema (2020-12, the dialect of OpenAPI 3.1), written
// from the same QuerySpec the compiler reads: each field with its value type and exactly its
// operators and operand shapes. Published in the OpenAPI document, it lets standard generators
// type filters; test/list-query/filter-schema.test.ts checks it against the compiler both ways.
//
// `$or` and `$and` are the schema itself again (a $ref to the component), with the nesting bound
// written out beside the reference: a branch of a top-level `$or` may nest two more levels, and
// so on, so that the schema refuses a fourth level as the compiler does.
//
// What JSON Schema cannot say, and the compiler still refuses (the schema's description lists it):
// a $regex that PCRE2 does not compile or that could take super-linear time, strings holding a lone
// surrogate, duplicate keys, numbers written beyond ±2^53 that round into range, a filter text
// over 10,000 characters, more than 50 field conditions in all.
import { OBJECT_ID_PATTERN, type FieldKind } from '../schemas/fields.js'
import { MAX_BRANCHES, MAX_CONDITIONS, MAX_DEPTH } from './limits.js'
import { MAX_FILTER_LENGTH } from './compile-list-query.js'
import { MAX_ARRAY, MAX_REGEX, MAX_SIZE, MAX_NUMBER } from './operands.js'
import { ELEMENT_KIND, ELEMENT_OPERATORS, ELEM_MATCH, OPERATORS_BY_KIND, type Operator } from './operators.js'
import { CUSTOM_FIELD_NAME, type FieldSpec, type QuerySpec } from './query-spec.js'

export type JsonSchema = Record<string, unknown>

// Dates in the three accepted forms (list-query/dates.ts), calendar-exact: months of 30 and 31
// days, and 29 February in leap years only, so that the pattern accepts no date the parser refuses.
const MONTH_DAY = '(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|' +
  '02-(?:0[1-9]|1[0-9]|2[0-8]))'
const LEAP_YEAR = '(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)'
const DAY = `(?:[0-9]{4}-${MONTH_DAY}|${LEAP_YEAR}-02-29)`
const TIME = 'T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{3})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])'
export const DATE_PATTERN = `^(?:[0-9]{4}|${DAY}(?:${TIME})?)$`

/** Every ordering of distinct flags among i, m, s and x: what `$options` takes. */
function optionFlags (): string[] {
  const out: string[] = []
  const grow = (prefix: string): void => {
    out.push(prefix)
    for (const flag of 'imsx') if (!prefix.includes(flag)) grow(prefix + flag)
  }
  grow('')
  return out
}
const OPTIONS = optionFlags()

const NUMBER: JsonSchema = { type: 'number', minimum: -MAX_NUMBER, maximum: MAX_NUMBER }
const OBJECT_ID: JsonSchema = {
  type: 'string', pattern: OBJECT_ID_PATTERN, description: 'An object id: 24 hexadecimal characters'
}
const DATE: JsonSchema = {
  type: 'string',
  pattern: DATE_PATTERN,
  description: 'YYYY or YYYY-MM-DD (the whole UTC year or day), or YYYY-MM-DDTHH:MM:SS[.mmm] with Z or ±HH:MM'
}

/** The JSON value one element of the field is compared with; undefined when none is (arrays of objects). */
function valueSchema (kind: FieldKind): JsonSchema | undefined {
  switch (kind) {
    case 'string': case 'string[]': return { type: 'string' }
    case 'number': return NUMBER
    case 'boolean': return { type: 'boolean' }
    case 'date': return DATE
    case 'ref': case 'ref[]': return OBJECT_ID
    case 'custom': return { anyOf: [{ type: 'string' }, NUMBER, { type: 'boolean' }] }
    case 'object[]': return undefined
  }
}

function operandSchema (operator: Operator, value: JsonSchema | undefined): JsonSchema | undefined {
  switch (operator) {
    case '$in': case '$nin': case '$all':
      return value === undefined ? undefined : { type: 'array', maxItems: MAX_ARRAY, items: value }
    case '$exists': return { type: 'boolean' }
    case '$size': return { type: 'integer', minimum: 0, maximum: MAX_SIZE }
    // The length in characters (code points), as the compiler counts; no NUL (MongoDB refuses it).
    case '$regex': return {
      type: 'string',
      maxLength: MAX_REGEX,
      pattern: '^[^\\u0000]*$',
      description: 'A PCRE2 pattern, as MongoDB reads it'
    }
    case '$options': return {
      type: 'string', enum: OPTIONS, description: 'Regex flags i, m, s and x, each at most once; only next to $regex'
    }
    default: return value
  }
}

/**
 * A field's condition: a value (equality), or an object of one or more of its operators (`$elemMatch` among them on
 * arrays).
 */
function conditionSchema (field: Pick<FieldSpec, 'kind' | 'operators'>, elemMatch?: JsonSchema): JsonSchema {
  const value = valueSchema(field.kind)
  const properties: Record<string, JsonSchema> = {}
  for (const operator of field.operators) {
    const operand = operandSchema(operator, value)
    if (operand !== undefined) properties[operator] = operand
  }
  if (elemMatch !== undefined) properties[ELEM_MATCH] = elemMatch
  const operators: JsonSchema = {
    type: 'object',
    properties,
    additionalProperties: false,
    minProperties: 1,
    ...(field.operators.has('$options') ? { dependentRequired: { $options: ['$regex'] } } : {})
  }
  if (value === undefined) return operators
  return { anyOf: [...(Array.isArray(value.anyOf) ? value.anyOf as JsonSchema[] : [value]), operators] }
}

const KIND_NAMES: Record<FieldKind, string> = {
  string: 'string',
  number: 'number',
  boolean: 'boolean',
  date: 'date',
  ref: 'object id',
  'string[]': 'array of strings',
  'ref[]': 'array of object ids',
  custom: 'custom field',
  'object[]': 'array of objects'
}

/** The names a custom field may have: the compiler's, less those that poison prototypes. */
const customKey = `^customFields\\.${CUSTOM_FIELD_NAME.source.slice(1, -1)}$`
const POISONED = ['__proto__', 'constructor', 'prototype'].map((name) => `customFields.${name}`)

export const NOT_EXPRESSED = [
  'a $regex that PCRE2 does not compile, or that this service refuses ' +
    '(constructs whose meaning differs between engines, ' +
    'patterns whose matching time could grow faster than the text, ' +
    'a pattern written between slashes as in JavaScript)',
  'strings holding a lone surrogate (\\ud800–\\udfff unpaired)',
  'a key repeated in the same object',
  'a number written beyond ±2^53 that rounds into that range (9007199254740993, 9007199254740992.5)',
  `a filter text over ${MAX_FILTER_LENGTH} characters`,
  `more than ${MAX_CONDITIONS} field conditions in all branches together ` +
    '(a value counts one, an object of operators one per operator)',
  `$or and $and inside $elemMatch nested, with those around it, more than ${MAX_DEPTH} deep`,
  `on an array of scalars, $elemMatch whose $or and $and make more than ${MAX_BRANCHES} alternatives ` +
    'for one element, or one alternative giving the same bound or $in twice'
]

/** What a branch at `levels` from the deepest may hold: `$or`/`$and` only while levels remain. */
function nesting (levels: number): JsonSchema {
  if (levels === 0) return { type: 'object', properties: { $or: false, $and: false } }
  const inner: JsonSchema = { type: 'array', items: nesting(levels - 1) }
  return { type: 'object', properties: { $or: inner, $and: inner } }
}

/** `$or` or `$and` of the filter itself: 1 to 10 filters of the same schema, nested at most MAX_DEPTH deep. */
function logicalSchema (operator: '$or' | '$and', id: string): JsonSchema {
  return {
    description: `${operator === '$or' ? 'Documents that match at least one' : 'Documents that match all'} of 1 to ` +
      `${MAX_BRANCHES} filters ({} matches every document); $or and $and nest at most ${MAX_DEPTH} deep`,
    type: 'array',
    minItems: 1,
    maxItems: MAX_BRANCHES,
    items: { $ref: `#/components/schemas/${id}`, ...nesting(MAX_DEPTH - 1) }
  }
}

/**
 * What `$elemMatch` on `field` holds, with `$or`/`$and` of the same inside while `levels` remain:
 * the element's fields on an array of documents, operators of the element type on scalars.
 */
function elemMatchSchema (field: FieldSpec, spec: QuerySpec, levels: number): JsonSchema | undefined {
  const element = ELEMENT_KIND[field.kind]
  if (element === undefined) return undefined
  const properties: Record<string, JsonSchema> = {}
  if (element === 'object[]') {
    for (const inner of spec.elements.get(field.path)?.fields.values() ?? []) {
      properties[inner.path] = conditionSchema(inner)
    }
  } else {
    const operators = conditionSchema({ kind: element, operators: ELEMENT_OPERATORS[element] as ReadonlySet<Operator> })
    Object.assign(properties, (operators.anyOf as JsonSchema[]).at(-1)?.properties)
  }
  if (levels > 0) {
    const branch = elemMatchSchema(field, spec, levels - 1)
    for (const operator of ['$or', '$and']) {
      properties[operator] = { type: 'array', minItems: 1, maxItems: MAX_BRANCHES, items: branch }
    }
  }
  return {
    description: `One element of ${field.path} satisfies every condition; ` +
      `${element === 'object[]' ? 'the element\'s fields' : 'operators of the element\'s type'}, and $or/$and of such`,
    type: 'object',
    properties,
    additionalProperties: false,
    minProperties: 1,
    ...(element === 'string' ? { dependentRequired: { $options: ['$regex'] } } : {})
  }
}

/**
 * The JSON Schema of a list's `filter` (JSON notation), named `id` in the OpenAPI components (`$or` and `$and` refer to
 * it there).
 */
export function filterSchema (spec: QuerySpec, id: string, subject: string): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const field of spec.fields.values()) {
    const elemMatch = elemMatchSchema(field, spec, MAX_DEPTH)
    const operators = [...field.operators, ...(elemMatch === undefined ? [] : [ELEM_MATCH])]
    properties[field.path] = {
      description: `${KIND_NAMES[field.kind]}: ${operators.join(' ')}`, ...conditionSchema(field, elemMatch)
    }
  }
  properties.$or = logicalSchema('$or', id)
  properties.$and = logicalSchema('$and', id)
  return {
    $id: id,
    title: id,
    description: `A filter on ${subject}: field conditions, ANDed, and $or/$and of such filters. ` +
      'A condition is a value (equality) or an object of operators. ' +
      `Also refused, beyond what this schema says: ${NOT_EXPRESSED.join('; ')}.`,
    type: 'object',
    properties,
    ...(spec.hasCustomFields
      ? {
          patternProperties: {
            [customKey]: {
              description: `custom field: ${[...OPERATORS_BY_KIND.custom].join(' ')}`,
              ...conditionSchema({ kind: 'custom', operators: OPERATORS_BY_KIND.custom })
            }
          },
          propertyNames: { not: { enum: POISONED } }
        }
      : {}),
    additionalProperties: false
  }
}
