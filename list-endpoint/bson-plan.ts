// The plan of one kind's documents, compiled from its TypeBox schema as fast-json-stringify
// compiles one: the declared fields in the schema's order, each with its kind and its name as
// bytes, and where each lies in the document being written (found without decoding names).
import type { TObject } from '@sinclair/typebox'
import { ObjectId } from 'mongodb'
import { fieldKind, type FieldKind } from '../schemas/fields.js'
import { T, cstringEnd, int32At, reusableWalk, utf8, valueSize } from './bson-elements.js'

export interface Field {
  index: number
  name: string
  /** The field's dotted path from the document's root (what a misfit report names). */
  path: string
  /** `,"name":` as UTF-8: from 1 for the first field written, from 0 for the others. */
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
  /**
   * The field met after each field in the last document located (`after[0]`: the first one;
   * `after[f + 1]`: the one after field f; -1: none known). Documents of a kind mostly keep one
   * order, so an element's name is first compared with the field that followed the previous
   * one, which also finds its NUL; a field left out of one document costs one miss, not the rest.
   */
  after: Int16Array
}

export function compilePlan (schema: TObject, prefix = ''): Plan {
  const fields: Field[] = []
  for (const [name, property] of Object.entries(schema.properties)) {
    const kind = fieldKind(property)
    if (kind === undefined) throw new Error(`bson-plan: field '${name}' has no field kind`)
    const field: Field = {
      index: fields.length,
      name,
      path: prefix + name,
      keyBytes: new Uint8Array(Buffer.from(`,${JSON.stringify(name)}:`, 'utf8')),
      bytes: Buffer.from(name, 'utf8'),
      kind
    }
    if (kind === 'object[]') {
      field.inner = compilePlan((property as unknown as { items: TObject }).items, `${prefix}${name}.`)
    }
    fields.push(field)
  }
  const byLength: Array<Field[] | undefined> = []
  for (const field of fields) (byLength[field.bytes.length] ??= []).push(field)
  return {
    fields,
    valueAt: new Int32Array(fields.length),
    types: new Uint8Array(fields.length),
    byLength,
    after: new Int16Array(fields.length + 1).fill(-1)
  }
}

function matchField (plan: Plan, buf: Buffer, start: number, end: number): Field | undefined {
  const candidates = plan.byLength[end - start]
  if (candidates === undefined) return undefined
  for (const field of candidates) if (sameBytes(field.bytes, buf, start)) return field
  return undefined
}

/** Whether `buf` holds the bytes of `name` at `at`. */
function sameBytes (name: Buffer, buf: Buffer, at: number): boolean {
  for (let i = 0; i < name.length; i++) if (name[i] !== buf[at + i]) return false
  return true
}

/** True when the element name at `at` is `bytes` with its NUL before `end`. */
function nameIs (bytes: Buffer, buf: Buffer, at: number, end: number): boolean {
  const n = bytes.length
  return at + n < end && buf[at + n] === 0 && sameBytes(bytes, buf, at)
}

// One walk for every call: it only checks the document's own length and NUL here.
const locateWalk = reusableWalk()

/**
 * Records where each declared field's value starts in the document at `at`, and its type;
 * true when a name starts with `$` (only then can the document decode to a DBRef). The walk
 * is Elements#next's (its cstringEnd and valueSize checks), each name first compared with the
 * field `after` expects; its state kept in locals, which V8 can hold in registers, rather than
 * in a walk object's fields.
 */
export function locate (plan: Plan, buf: Buffer, at: number): boolean {
  const { fields, valueAt, types, after } = plan
  // Plans hold a few fields: stores in a loop the compiler keeps inline, not a call to fill().
  for (let f = 0; f < valueAt.length; f++) valueAt[f] = -1
  const end = locateWalk.reset(buf, at).end
  let dollar = false
  // The slot of `after` for the last field met (names that are no field are passed over).
  let previous = 0
  for (let i = at + 4; i < end;) {
    const type = buf[i] as number
    const nameAt = i + 1
    const guess = after[previous] as number
    let field = guess >= 0 ? fields[guess] : undefined
    let nameEnd: number
    if (field !== undefined && nameIs(field.bytes, buf, nameAt, end)) {
      nameEnd = nameAt + field.bytes.length
    } else {
      nameEnd = cstringEnd(buf, nameAt, end)
      field = matchField(plan, buf, nameAt, nameEnd)
      if (field !== undefined) after[previous] = field.index
    }
    if (buf[nameAt] === 0x24) dollar = true
    const valueStart = nameEnd + 1
    if (field !== undefined) {
      valueAt[field.index] = valueStart
      types[field.index] = type
      previous = field.index + 1
    }
    i = valueStart + valueSize(buf, type, valueStart, end)
  }
  return dollar
}

/**
 * Whether the document at `at` begins with an ObjectId `_id` (where MongoDB stores it): type 7,
 * the name "_id" and its NUL; its 12 bytes then lie from `at + 9`.
 */
export function leadingObjectIdAt (buf: Buffer, at: number): boolean {
  return buf[at + 4] === 0x07 && buf[at + 5] === 0x5f && buf[at + 6] === 0x69 && buf[at + 7] === 0x64 &&
    buf[at + 8] === 0
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
