// Small helpers for the field kinds that matter to queries. The kind is written into the
// schema itself (`x-field-kind`), so the serializer, the query compiler and the OpenAPI
// document all read it from the one declaration.
import { Type, type TProperties, type TSchema } from '@sinclair/typebox'

export const FIELD_KIND = 'x-field-kind'

export type FieldKind = 'string' | 'number' | 'boolean' | 'date' | 'ref' | 'string[]' | 'ref[]' | 'custom' | 'object[]'

export const OBJECT_ID_PATTERN = '^[0-9a-fA-F]{24}$'
/** 24 hexadecimal characters, either case: what the API accepts as an ObjectId. */
export const OBJECT_ID = new RegExp(OBJECT_ID_PATTERN)

/** The path parameters of a list under a project, and of its counts and feed. */
export const ProjectParams = () =>
  Type.Object({
    projectId: Type.String({
      pattern: OBJECT_ID_PATTERN,
      description: 'The project (24 hexadecimal characters)',
      examples: ['65cd7e3007370d3300000000']
    })
  })

/** An ObjectId reference, listed as a 24-hex lowercase string. */
export const Ref = (description: string) =>
  Type.String({ pattern: OBJECT_ID_PATTERN, description, examples: ['665f1c2e9b1d4a3f5c7e8a90'], [FIELD_KIND]: 'ref' })

/** A date, listed as an ISO 8601 string with milliseconds and `Z`. */
export const DateTime = (description: string) =>
  Type.String({ format: 'date-time', description, examples: ['2024-06-14T09:30:00.000Z'], [FIELD_KIND]: 'date' })

export const StringArray = (description: string) =>
  Type.Array(Type.String(), { description, [FIELD_KIND]: 'string[]' })

export const RefArray = (description: string) =>
  Type.Array(Type.String({ pattern: OBJECT_ID_PATTERN }), { description, [FIELD_KIND]: 'ref[]' })

/** An array of embedded documents; its fields are filterable with element semantics. */
export const DocumentArray = <T extends TProperties>(properties: T, description: string) =>
  Type.Array(Type.Object(properties, { additionalProperties: false }), { description, [FIELD_KIND]: 'object[]' })

/** Free-form scalars, returned as stored; filterable as `customFields.<name>`. */
export const CustomFields = () =>
  Type.Object({}, {
    additionalProperties: true,
    description: 'Free-form values, filterable as `customFields.<name>`',
    [FIELD_KIND]: 'custom'
  })

/** Fields every kind has (docs/query-language.md, "The lists"). */
export const commonFields = {
  _id: Ref('Identifier'),
  name: Type.Optional(Type.String({ description: 'Name' })),
  email: Type.Optional(Type.String({ description: 'Contact e-mail' })),
  createdAt: Type.Optional(DateTime('Creation time')),
  updatedAt: Type.Optional(DateTime('Last update time')),
  customFields: Type.Optional(CustomFields())
}

export const projectField = { project: Type.Optional(Ref('The project this belongs to')) }

/** Reads the query kind of a property schema: explicit for the helpers above, else from its JSON type. */
export function fieldKind (schema: TSchema): FieldKind | undefined {
  const declared = (schema as Record<string, unknown>)[FIELD_KIND]
  if (typeof declared === 'string') return declared as FieldKind
  switch (schema.type) {
    case 'string': return 'string'
    case 'number': case 'integer': return 'number'
    case 'boolean': return 'boolean'
    default: return undefined
  }
}
