// The plan of one kind's documents, compiled from its TypeBox schema as fast-json-stringify
// compiles one: the declared fields in the schema's order, each with its kind and its name as
// bytes, and where each lies in the document being written (found without decoding names).
import type { TObject } from '@sinclair/typebox'
import { ObjectId } from 'mongodb'
import { fieldKind, type FieldKind } from '../schemas/fields.js'
import { T, int32At, reusableWalk, utf8 } from './bson-page.js'

export interface Field {
  index: number
  name: string
  /** The field's dotted path from the document's root (what a misfit report names). */
  path: string
  /** `"name":` as UTF-8 */
  keyBytes: Uint8Array
  bytes: Buffer
  kind: FieldKind
  inner?: Plan
}

export interface Plan {
  fields: Field[]
  /**
   * Where each declared field's value starts in the document being written, -1 when absent,
   * and its BSON type (reused from document to document: plans are not re-entered).
   */
  valueAt: Int32Array
  types: Uint8Array
  /** Fields by the length of their name in bytes, to match element names without decoding them. */
  byLength: Array<Field[] | undefined>
}

export function compilePlan (schema: TObject, prefix = ''): Plan {
  const fields: Field[] = []
  for (const [name, property] of Object.entries(schema.properties)) {
    const kind = fieldKind(property)
    if (kind === undefined) throw new Error(`bson-plan: field '${name}' has no field kind`)
    const field: Field = { index: fields.length, name, path: prefix + name, keyBytes: new Uint8Array(Buffer.from(`${JSON.stringify(name)}:`, 'utf8')), bytes: Buffer.from(name, 'utf8'), kind }
    if (kind === 'object[]') field.inner = compilePlan((property as unknown as { items: TObject }).items, `${prefix}${name}.`)
    fields.push(field)
  }
  const byLength: Array<Field[] | undefined> = []
  for (const field of fields) (byLength[field.bytes.length] ??= []).push(field)
  return { fields, valueAt: new Int32Array(fields.length), types: new Uint8Array(fields.length), byLength }
}

function matchField (plan: Plan, buf: Buffer, start: number, end: number): Field | undefined {
  const candidates = plan.byLength[end - start]
  if (candidates === undefined) return undefined
  for (const field of candidates) {
    const bytes = field.bytes
    let i = 0
    while (i < bytes.length && bytes[i] === buf[start + i]) i++
    if (i === bytes.length) return field
  }
  return undefined
}

// One walk for every call: matchField walks nothing.
const locateWalk = reusableWalk()

/**
 * Records where each declared field's value starts in the document at `at`, and its type;
 * true when a name starts with `$` (only then can the document decode to a DBRef).
 */
export function locate (plan: Plan, buf: Buffer, at: number): boolean {
  const { valueAt, types } = plan
  valueAt.fill(-1)
  let dollar = false
  for (const e = locateWalk.reset(buf, at); e.next();) {
    if (buf[e.nameAt] === 0x24) dollar = true
    const field = matchField(plan, buf, e.nameAt, e.nameEnd)
    if (field !== undefined) {
      valueAt[field.index] = e.valueAt
      types[field.index] = e.type
    }
  }
  return dollar
}

/** The `_id` of the document the top-level plan last located. */
export function idOf (plan: Plan, buf: Buffer, idIndex: number): unknown {
  const valueAt = plan.valueAt[idIndex] as number
  if (idIndex < 0 || valueAt < 0) return undefined
  const type = plan.types[idIndex]
  if (type === T.ObjectId) return new ObjectId(buf.subarray(valueAt, valueAt + 12))
  if (type === T.String) return utf8(buf, valueAt + 4, valueAt + 3 + int32At(buf, valueAt))
  return undefined
}
