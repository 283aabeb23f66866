// The OpenAPI description of what a list accepts, written from its QuerySpec: the same
// rules the compiler enforces, so the docs cannot drift from the code.
import { Type, type TObject } from '@sinclair/typebox'
import type { ListLimits } from '../list-query/compile-list-query.js'
import { MAX_BRANCHES, MAX_CONDITIONS, MAX_DEPTH } from '../list-query/limits.js'
import { MAX_SORT_FIELDS } from '../list-query/compile-sort.js'
import { MAX_ARRAY, MAX_REGEX } from '../list-query/operands.js'
import { buildQuerySpec, type FieldSpec, type QuerySpec } from '../list-query/query-spec.js'
import { filterSchema, type JsonSchema } from '../list-query/filter-schema.js'
import * as kinds from '../schemas/kinds.js'
import { ELEMENT_KIND, ELEM_MATCH, OPERATORS_BY_KIND } from '../list-query/operators.js'

/** Names the component that types a JSON parameter (plugins/openapi.ts). */
export const FILTER_SCHEMA = 'x-filter-schema'

/** The OpenAPI component that describes the filter of a kind's list. */
export const filterSchemaId = (kindId: string): string => `${kindId}Filter`

/**
 * The filter schema of every kind, by component name. Kinds with a project field are listed
 * under /projects/{projectId}/, which fixes it; so does the route (list-handler.ts).
 */
export function filterSchemas (): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {}
  for (const kind of Object.values(kinds)) {
    const id = filterSchemaId(kind.$id as string)
    const { $id, ...schema } = filterSchema(
      buildQuerySpec(kind, { scopeField: scopeOf(kind) }), id, `${kind.$id as string} documents`
    )
    out[id] = schema
  }
  return out
}

export const scopeOf = (kind: TObject): string | undefined => 'project' in kind.properties ? 'project' : undefined

const TYPE_NAMES: Record<string, string> = {
  string: 'string',
  number: 'number',
  boolean: 'boolean',
  date: 'date',
  ref: 'ObjectId',
  'string[]': 'string[]',
  'ref[]': 'ObjectId[]',
  'object[]': 'array of objects',
  custom: 'custom (as stored)'
}

export function filterTable (spec: QuerySpec): string {
  const operators = (f: FieldSpec): string[] =>
    [...f.operators, ...(ELEMENT_KIND[f.kind] === undefined ? [] : [ELEM_MATCH])]
  const rows = [...spec.fields.values()].map((f) => `| \`${f.path}\` | ${TYPE_NAMES[f.kind]} | ` +
    `${operators(f).map((o) => `\`${o}\``).join(' ')} | ${f.sortable ? 'yes' : 'no'} |`)
  if (spec.hasCustomFields) {
    rows.push(`| \`customFields.<name>\` | ${TYPE_NAMES.custom} | ` +
      `${[...OPERATORS_BY_KIND.custom].map((o) => `\`${o}\``).join(' ')} | yes |`)
  }
  return ['| field | type | filter operators | sortable |', '|---|---|---|---|', ...rows].join('\n')
}

/** A bracket filter this kind accepts, on one of its own fields. */
export function bracketExample (spec: QuerySpec): string {
  const fields = [...spec.fields.values()].filter((f) => f.path !== spec.scopeField && !f.path.includes('.'))
  const list = fields.find((f) => f.kind === 'string[]' && f.operators.has('$in'))
  if (list !== undefined) return `filter[${list.path}][$in]=music,dance`
  const date = fields.find((f) => f.kind === 'date' && f.operators.has('$gte'))
  if (date !== undefined) return `filter[${date.path}][$gte]=2024-06-01`
  return 'filter[_id][$in]=65cd7e3007370d3300000000,65fd0240ab0f001c000008bf'
}

export function describeList (spec: QuerySpec, limits: ListLimits, jsonExample: string): string {
  return [
    'Filterable and sortable fields:',
    '',
    filterTable(spec),
    '',
    `Filter with JSON (\`filter=${jsonExample}\`) or brackets (\`${bracketExample(spec)}\`), not both. ` +
    'Bracket values are read by the field\'s type; a custom field\'s value written as a JSON number, `true` or ' +
    '`false` is that value (JSON asks for the string `"60"`); list items are comma-separated and trimmed. ' +
    'Keys are ANDed. ' +
    `\`$or\` and \`$and\` take arrays of 1 to ${MAX_BRANCHES} filters ` +
    '(`{"$or":[{"name":"Yoga"},{"name":"Pilates"}]}`, or `filter[$or][0][name]=Yoga&filter[$or][1][name]=Pilates`), ' +
    `nested at most ${MAX_DEPTH} deep, with at most ${MAX_CONDITIONS} field conditions in all. ` +
    '`$elemMatch` on an array asks one element to satisfy every condition: the element\'s fields on an array of ' +
    'documents (`{"sessionsSubscriptions":{"$elemMatch":{"session":"<id>","subscribedAt":{"$gte":"2024-06-01"}}}}`), ' +
    'operators of the element\'s type on an array of values (`{"tags":{"$elemMatch":{"$regex":"^yo"}}}`). ' +
    'Dates: `YYYY`, `YYYY-MM-DD` (the whole UTC year or day) or `YYYY-MM-DDTHH:MM:SS[.mmm]Z`/`±HH:MM`. ' +
    `Arrays hold at most ${MAX_ARRAY} values, patterns at most ${MAX_REGEX} characters. ` +
    '`$where`, `$near`, `$geoWithin` and `$geoIntersects` are blocked; `$nor`, `$not`, `$expr` and other operators ' +
    'are unknown. ' +
    (spec.scopeField !== undefined ? `\`${spec.scopeField}\` is fixed by the path. ` : '') +
    `Sort on up to ${MAX_SORT_FIELDS} fields; \`_id\` always ends the sort. ` +
    `limit 0–${limits.maxLimit} (default ${limits.defaultLimit}; 0 counts only), skip 0–${limits.maxSkip}. ` +
    'A page with more results after it carries `next`, and a `Link: <…>; rel="next"` header with the URL of the ' +
    'next page: pass `next` as `after` to continue. `fields` picks the fields returned.'
  ].join('\n')
}

/** The query parameters, for the docs and for Swagger UI's "Try it out" (the plugin validates them). */
export function listQuerystring (
  spec: QuerySpec, limits: ListLimits, example: { filter: string, sort: string }, filterId: string
) {
  const sortable = [...spec.fields.values()].filter((f) => f.sortable).map((f) => f.path)
  return Type.Object({
    // A JSON text: plugins/openapi.ts publishes it in OpenAPI's `content` form, typed by the kind's
    // filter schema, so that generators type filters and Swagger UI offers a JSON editor.
    filter: Type.Optional(Type.String({
      description: `JSON object of conditions, described by the ${filterId} schema; or use ` +
        '`filter[<field>]=<value>` / `filter[<field>][<op>]=<value>` brackets instead ' +
        '(`filter[$or][<i>][<field>]=…` for branches). See the table above.',
      examples: [example.filter],
      [FILTER_SCHEMA]: filterId
    })),
    sort: Type.Optional(Type.String({
      description: 'Comma-separated `+field` / `-field` (a raw + arrives as a space and counts as +). ' +
        `Sortable: ${sortable.join(', ')}${spec.hasCustomFields ? ', `customFields.<name>`' : ''}.`,
      examples: [example.sort]
    })),
    limit: Type.Optional(Type.Integer({
      minimum: 0,
      maximum: limits.maxLimit,
      default: limits.defaultLimit,
      description: 'Maximum number of results; 0 reads no document (a count-only page with count=true)'
    })),
    // No default: Swagger UI would send skip=0 with every request, and skip with after is refused.
    skip: Type.Optional(Type.Integer({
      minimum: 0, maximum: limits.maxSkip, description: 'Number of leading results skipped (default 0; not with after)'
    })),
    count: Type.Optional(Type.Boolean({
      default: false, description: 'Add `total`, the number of matches ignoring limit, skip and after'
    })),
    fields: Type.Optional(Type.String({
      // No example: Swagger UI would pre-fill it, and "Try it out" would then return only those fields.
      description: 'Comma-separated fields to return (`_id` always comes), such as ' +
        `\`${spec.returnable.filter((f) => f !== '_id').slice(0, 2).join(',')}\`. ` +
        `Allowed: ${spec.returnable.join(', ')}${spec.hasCustomFields ? ', `customFields.<name>`' : ''}.`
    })),
    after: Type.Optional(Type.String({
      description: 'Continue a listing: the `next` of the previous page, unchanged. Keep filter, sort and fields as ' +
        'they were; limit and count may change.'
    }))
  })
}
