// MongoDB does not enforce our schemas and other services write to the collections. A stored
// value whose BSON type does not fit its declared field is left out of that document's JSON
// (docs/query-language.md, "The lists"): never converted into an invented value, never a 5xx for the page.
import type { TObject, TSchema } from '@sinclair/typebox'
import type { FastifyBaseLogger } from 'fastify'
import { BSON, Long, Timestamp, type Document } from 'mongodb'
import { fieldKind, type FieldKind } from '../schemas/fields.js'

type Fits = (value: unknown) => boolean

const isObjectId = (value: unknown): boolean => (value as { _bsontype?: unknown } | null)?._bsontype === 'ObjectId'
// A BSON regular expression decodes to a RegExp: not a document either.
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) &&
  (value as { _bsontype?: unknown })._bsontype === undefined && !(value instanceof Date) && !(value instanceof RegExp)

const FITS: Record<Exclude<FieldKind, 'object[]'>, Fits> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
  date: (v) => v instanceof Date && !Number.isNaN(v.getTime()),
  ref: isObjectId,
  'string[]': (v) => Array.isArray(v) && v.every((item) => typeof item === 'string'),
  'ref[]': (v) => Array.isArray(v) && v.every(isObjectId),
  custom: isPlainObject
}

/** BSON values JSON.stringify would write as an invented value (their classes, not `_bsontype`). */
const NO_JSON_FORM = ['Timestamp', 'BSONRegExp', 'Binary', 'Code', 'MinKey', 'MaxKey'] as const
const hasNoJsonForm = (value: object): boolean => {
  const type = (value as { _bsontype?: unknown })._bsontype
  // A class's _bsontype is on its prototype; a stored document's field of that name is its own.
  return typeof type === 'string' && (NO_JSON_FORM as readonly string[]).includes(type) &&
    !Object.hasOwn(value, '_bsontype')
}

const put = (into: Record<string, unknown>, key: string, value: unknown): void => {
  // A stored `__proto__` name is data: never the prototype.
  Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true })
}

/**
 * A decoded `customFields` value with what JSON has no exact form for in MongoDB's canonical
 * Extended JSON: an Int64 beyond ±2^53 (a Long) `{ $numberLong: "<digits>" }`, a NaN or infinite
 * double `{ $numberDouble: "NaN" }`, a timestamp, regular expression, binary, code, MinKey or
 * MaxKey as EJSON.serialize writes it; never an invented JSON value (JSON.stringify would write
 * null, {}, or binary as text). Dates, ObjectIds and Decimal128s keep their JSON forms. The same
 * object when it holds none (the common case).
 */
export function exactCustom (value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : { $numberDouble: String(value) }
  if (typeof value !== 'object' || value === null) return value
  // The class, not `_bsontype`: a stored document may hold a field of that name. A Timestamp is a Long.
  if (value instanceof Long && !(value instanceof Timestamp)) return { $numberLong: value.toString() }
  if (hasNoJsonForm(value)) return BSON.EJSON.serialize(value, { relaxed: false })
  if (Array.isArray(value)) {
    let out: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const exact = exactCustom(value[i])
      if (exact !== value[i]) (out ??= value.slice())[i] = exact
    }
    return out ?? value
  }
  if (!isPlainObject(value)) return value
  let out: Record<string, unknown> | undefined
  for (const key of Object.keys(value)) {
    const exact = exactCustom(value[key])
    if (exact !== value[key]) put(out ??= { ...value }, key, exact)
  }
  return out ?? value
}

/** A misfit found in a stored document: which field, in which document. */
export interface Misfit { field: string, id: unknown }

/** The misfits seen, as the `fastify.offSchema` decorator gives them (plugins/off-schema.ts). */
export interface OffSchemaRecord {
  /** Misfits seen, by `collection.field`. */
  readonly counts: Map<string, number>
  report: (collection: string, misfit: Misfit, log: FastifyBaseLogger) => void
}

interface FieldCheck { fits: Fits, inner?: Record<string, FieldCheck>, exact?: (value: unknown) => unknown }

function checkFor (property: TSchema): FieldCheck | undefined {
  const kind = fieldKind(property)
  if (kind === undefined) return undefined
  if (kind === 'custom') return { fits: FITS.custom, exact: exactCustom }
  if (kind !== 'object[]') return { fits: FITS[kind] }
  const items = (property as unknown as { items: TObject }).items
  return { fits: (v) => Array.isArray(v) && v.every(isPlainObject), inner: checksFor(items) }
}

function checksFor (schema: TObject): Record<string, FieldCheck> {
  const checks: Record<string, FieldCheck> = Object.create(null)
  for (const [name, property] of Object.entries(schema.properties)) {
    const check = checkFor(property)
    if (check !== undefined) checks[name] = check
  }
  return checks
}

/** The document without its misfits; the same object when everything fits (the common case). */
function clean (
  doc: Document, checks: Record<string, FieldCheck>, prefix: string, found: (field: string) => void
): Document {
  let out: Document | undefined
  for (const key in doc) {
    const check = checks[key]
    if (check === undefined) continue
    const value = doc[key]
    let kept: unknown = value
    if (!check.fits(value)) {
      found(prefix + key)
      kept = undefined
    } else if (check.exact !== undefined) {
      kept = check.exact(value)
    } else if (check.inner !== undefined) {
      const items = value as Document[]
      let cleaned: Document[] | undefined
      const innerPrefix = `${prefix}${key}.`
      for (let i = 0; i < items.length; i++) {
        const item = items[i] as Document
        const after = clean(item, check.inner, innerPrefix, found)
        if (after !== item) (cleaned ??= items.slice())[i] = after
      }
      if (cleaned !== undefined) kept = cleaned
    }
    if (kept === value) continue
    out ??= { ...doc }
    if (kept === undefined) delete out[key]
    else out[key] = kept
  }
  return out ?? doc
}

/**
 * A guard for one kind's documents: returns the page with misfitting values left out, and
 * reports each misfit. Fitting documents are returned as they are, without a copy.
 */
export function offSchemaGuard (schema: TObject): (docs: Document[], report: (misfit: Misfit) => void) => Document[] {
  const checks = checksFor(schema)
  return (docs, report) => {
    let out: Document[] | undefined
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i] as Document
      const cleaned = clean(doc, checks, '', (field) => report({ field, id: doc._id }))
      if (cleaned !== doc) {
        out ??= docs.slice()
        out[i] = cleaned
      }
    }
    return out ?? docs
  }
}
