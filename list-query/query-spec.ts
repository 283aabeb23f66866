import type { TObject, TSchema } from '@sinclair/typebox'
import { closest, distance } from 'fastest-levenshtein'
import { fieldKind, type FieldKind } from '../schemas/fields.js'
import { ID_OPERATORS, OPERATORS_BY_KIND, type Operator } from './operators.js'

export interface FieldSpec {
  path: string
  kind: FieldKind
  operators: ReadonlySet<Operator>
  /** Scalars, refs, `_id` and custom fields sort; arrays do not. */
  sortable: boolean
  /** The arrays of embedded documents the path goes through, outermost first (`sessionsSubscriptions`). */
  arrays?: readonly string[]
}

/** What one list endpoint accepts, derived once from its kind's schema. */
export interface QuerySpec {
  fields: ReadonlyMap<string, FieldSpec>
  /** Paths whose values are ids of other documents: nothing inside them is filterable. */
  references: ReadonlySet<string>
  hasCustomFields: boolean
  /** The field the path fixes (`project` on nested lists): not filterable there. */
  scopeField?: string
  /** Field names offered as "did you mean" suggestions. */
  suggestions: string[]
  /** The kind's declared top-level fields: what `fields` may name. */
  returnable: string[]
  /** Per array of embedded documents, what `$elemMatch` accepts inside: the element's own fields. */
  elements: ReadonlyMap<string, QuerySpec>
}

export const CUSTOM_FIELD_NAME = /^[A-Za-z0-9_-]{1,64}$/

export function buildQuerySpec (schema: TObject, { scopeField }: { scopeField?: string } = {}): QuerySpec {
  const fields = new Map<string, FieldSpec>()
  const references = new Set<string>()
  const elements = new Map<string, QuerySpec>()
  let hasCustomFields = false
  const add = (path: string, property: TSchema, arrays: readonly string[]) => {
    const kind = fieldKind(property)
    if (kind === undefined) return
    if (kind === 'custom') {
      hasCustomFields = true
      return
    }
    if (kind === 'ref' || kind === 'ref[]') references.add(path)
    const sortable = arrays.length === 0 && !kind.endsWith('[]')
    const operators = path === '_id' ? ID_OPERATORS : OPERATORS_BY_KIND[kind]
    fields.set(path, { path, kind, operators, sortable, ...(arrays.length === 0 ? {} : { arrays }) })
    if (kind === 'object[]') {
      const items = (property as unknown as { items: TObject }).items
      for (const [name, inner] of Object.entries(items.properties)) add(`${path}.${name}`, inner, [...arrays, path])
      elements.set(path, buildQuerySpec(items))
    }
  }
  for (const [name, property] of Object.entries(schema.properties)) add(name, property, [])
  if (scopeField !== undefined) fields.delete(scopeField)
  const suggestions = [...fields.keys()]
  return {
    fields, references, hasCustomFields, scopeField, suggestions, returnable: Object.keys(schema.properties), elements
  }
}

const FORBIDDEN_SEGMENTS = ['__proto__', 'constructor', 'prototype']

/** Segments that poison prototypes wherever a path is later used as an object key. */
export function hasForbiddenSegment (path: string): boolean {
  if (!FORBIDDEN_SEGMENTS.some((segment) => path.includes(segment))) return false
  return path.split('.').some((segment) => FORBIDDEN_SEGMENTS.includes(segment))
}

export type PathResolution =
  | { field: FieldSpec }
  | { code: 'SCOPE_FIELD' | 'RELATED_PATH' | 'UNKNOWN_FIELD', message: string }

const customFieldSpec = (path: string): FieldSpec =>
  ({ path, kind: 'custom', operators: OPERATORS_BY_KIND.custom, sortable: true })

/** Tells what a dotted path names for this endpoint, or why it names nothing filterable. */
export function resolvePath (spec: QuerySpec, path: string, context: 'filter' | 'sort'): PathResolution {
  const field = spec.fields.get(path)
  if (field !== undefined) return { field }
  if (hasForbiddenSegment(path)) {
    return {
      code: 'UNKNOWN_FIELD',
      message: `Unknown field '${path}' in ${context}: '__proto__', 'constructor' and 'prototype' name no field`
    }
  }
  if (path === spec.scopeField) {
    return { code: 'SCOPE_FIELD', message: `'${path}' is fixed by the URL path and cannot be used in ${context}` }
  }
  const dot = path.indexOf('.')
  if (spec.hasCustomFields && dot > 0 && path.slice(0, dot) === 'customFields' &&
    CUSTOM_FIELD_NAME.test(path.slice(dot + 1))) {
    return { field: customFieldSpec(path) }
  }
  if (path.startsWith('_id.') && spec.fields.has('_id')) {
    return {
      code: 'UNKNOWN_FIELD',
      message: `Unknown field '${path}' in ${context}: '_id' is the document's own object id and has no fields ` +
        `inside; ${context} on '_id' itself`
    }
  }
  for (let end = path.indexOf('.'); end > 0; end = path.indexOf('.', end + 1)) {
    const prefix = path.slice(0, end)
    if (spec.references.has(prefix) || prefix === spec.scopeField) {
      return {
        code: 'RELATED_PATH',
        message: `'${path}' reaches into a related object: related objects cannot be filtered or sorted; ` +
          `use '${prefix}' with an object id`
      }
    }
  }
  const inArray = elementHint(spec, path, context)
  if (inArray !== undefined) {
    return { code: 'UNKNOWN_FIELD', message: `Unknown field '${path}' in ${context}; ${inArray}` }
  }
  const suggestion = suggest(spec, path)
  const hint = path.startsWith('customFields') && spec.hasCustomFields
    ? "; custom fields are written 'customFields.<name>' with a name of 1–64 letters, digits, '_' or '-'"
    : suggestion === undefined ? '' : `; did you mean '${suggestion}'?`
  return { code: 'UNKNOWN_FIELD', message: `Unknown field '${path}' in ${context}${hint}` }
}

const suggest = (spec: QuerySpec, path: string): string | undefined => nearest(path, spec.suggestions)

/** The name of `names` that `path` most likely misspells (the same letters in another case first), if one is near. */
export function nearest (path: string, names: readonly string[]): string | undefined {
  if (path.length === 0 || path.length > 100 || names.length === 0) return undefined
  const lower = path.toLowerCase()
  const sameLetters = names.find((name) => name.toLowerCase() === lower)
  if (sameLetters !== undefined) return sameLetters
  const best = closest(path, names as string[])
  return distance(path, best) <= Math.max(2, Math.floor(path.length / 3)) ? best : undefined
}

/**
 * A path into an array of documents that names none of its elements' fields: those fields, closest
 * first (in a filter), or that none of them sorts.
 */
function elementHint (spec: QuerySpec, path: string, context: 'filter' | 'sort'): string | undefined {
  for (let end = path.lastIndexOf('.'); end > 0; end = path.lastIndexOf('.', end - 1)) {
    const array = path.slice(0, end)
    const element = spec.elements.get(array)
    if (element === undefined) continue
    if (context === 'sort') return `'${array}' is an array of documents: neither it nor its elements' fields sort`
    const rest = path.slice(end + 1).toLowerCase()
    const names = [...element.fields.keys()]
      .map((name, order) => ({ name, order, distance: distance(rest, name.toLowerCase()) }))
      .sort((a, b) => a.distance - b.distance || a.order - b.order)
      .map(({ name }) => `'${array}.${name}'`)
    const listed = names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1) as string}` : names.join('')
    return `the elements of '${array}' have the fields ${listed}`
  }
  return undefined
}
