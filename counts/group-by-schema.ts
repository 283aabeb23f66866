// The `by` values of each kind's counts as OpenAPI components (`<Kind>GroupBy`, an enum), so that
// generators type them; plugins/openapi.ts publishes them and points each `by` parameter there.
import { scopeOf } from '../list-endpoint/describe-query.js'
import { groupablePaths } from '../list-query/group-by.js'
import { CUSTOM_FIELD_NAME, buildQuerySpec } from '../list-query/query-spec.js'
import * as kinds from '../schemas/kinds.js'

/** Marks the `by` parameter of a route: the id of its enum component. */
export const GROUP_BY_SCHEMA = 'x-group-by-schema'

export const groupBySchemaId = (kindId: string): string => `${kindId}GroupBy`

/** A custom field's name as `by` takes it. */
export const CUSTOM_GROUP = `^customFields\\.${CUSTOM_FIELD_NAME.source.slice(1, -1)}$`

/** Every kind's `by` enum, by component name (custom fields are the parameter's pattern beside it). */
export function groupBySchemas (): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {}
  for (const kind of Object.values(kinds)) {
    const paths = groupablePaths(buildQuerySpec(kind, { scopeField: scopeOf(kind) }))
      .filter((path) => path !== 'customFields.<name>')
    out[groupBySchemaId(kind.$id as string)] = {
      type: 'string',
      enum: paths,
      description: `What ${kind.$id as string} documents can be counted by (a date by its UTC day, month or year); ` +
        'also customFields.<name>'
    }
  }
  return out
}

/** The parameter's schema in the document: the kind's enum, or a custom field's name. */
export function groupByParameter (id: string): Record<string, unknown> {
  return { anyOf: [{ $ref: `#/components/schemas/${id}` }, { type: 'string', pattern: CUSTOM_GROUP }] }
}
