// BSON straight to JSON: a list's documents arrive from the driver as raw BSON (its `raw`
// option) and leave as the JSON the kind's response schema would give for the decoded
// document, without building JavaScript objects in between. A plan is compiled per kind
// from its TypeBox schema, as fast-json-stringify compiles one per schema:
// - declared fields only, in the schema's order (last occurrence wins, as when decoding);
// - ObjectId → 24 lowercase hex digits; Date → ISO 8601 with milliseconds and `Z`;
// - strings escaped as JSON.stringify escapes them;
// - a value whose BSON type does not fit its field is left out and reported (off-schema.ts
//   states the rules; they are the decoder's: Int64 is a number only within ±2^53, a
//   date only within ±8.64e15 ms, a `{$ref, $id}` document is a DBRef, not a document);
// - `customFields` as stored, as JSON.stringify writes the decoded values; types other than
//   the common ones (Decimal128, Binary, Regex, Timestamp, …) take the decoder's path.
// test/list-endpoint/bson-json.test.ts checks all of it against the schema serializer.
import { isUtf8 } from 'node:buffer'
import type { TObject } from '@sinclair/typebox'
import { BSON, ObjectId, type Document } from 'mongodb'
import { fieldKind, type FieldKind } from '../schemas/fields.js'
import type { Misfit } from './off-schema.js'

const enum T { Double = 1, String = 2, Document = 3, Array = 4, Binary = 5, Undefined = 6, ObjectId = 7, Boolean = 8, Date = 9, Null = 10, Regex = 11, DBPointer = 12, Code = 13, Symbol = 14, CodeWithScope = 15, Int32 = 16, Timestamp = 17, Int64 = 18, Decimal128 = 19, MinKey = 255, MaxKey = 127 }

const MAX_DATE_MS = 8.64e15

// Buffer's own slice methods (what buf.toString(encoding, start, end) dispatches to), called
// directly: the dispatch was a tenth of the transcoder's time. Node has had them since 0.x.
interface Slices { latin1Slice: (start: number, end: number) => string, utf8Slice: (start: number, end: number) => string }
const slices = Buffer.prototype as unknown as Slices
if (typeof slices.latin1Slice !== 'function' || typeof slices.utf8Slice !== 'function' ||
  typeof (slices as unknown as Writes).latin1Write !== 'function' || typeof (slices as unknown as Writes).utf8Write !== 'function') {
  throw new Error('bson-json: this Node.js has no Buffer#latin1Slice/utf8Slice/latin1Write/utf8Write')
}
const latin1 = (buf: Buffer, start: number, end: number): string => (buf as unknown as Slices).latin1Slice(start, end)
const utf8 = (buf: Buffer, start: number, end: number): string => (buf as unknown as Slices).utf8Slice(start, end)
/** The driver's defaults for decoding replies (what the schema path sees). */
const DECODE_OPTIONS = { promoteLongs: true, promoteValues: true, promoteBuffers: false, bsonRegExp: false, useBigInt64: false, validation: { utf8: true } } as const

interface Field {
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

interface Plan {
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

function compilePlan (schema: TObject, prefix = ''): Plan {
  const fields: Field[] = []
  for (const [name, property] of Object.entries(schema.properties)) {
    const kind = fieldKind(property)
    if (kind === undefined) throw new Error(`bson-json: field '${name}' has no field kind`)
    const field: Field = { index: fields.length, name, path: prefix + name, keyBytes: new Uint8Array(Buffer.from(`${JSON.stringify(name)}:`, 'utf8')), bytes: Buffer.from(name, 'utf8'), kind }
    if (kind === 'object[]') field.inner = compilePlan((property as unknown as { items: TObject }).items, `${prefix}${name}.`)
    fields.push(field)
  }
  const byLength: Array<Field[] | undefined> = []
  for (const field of fields) (byLength[field.bytes.length] ??= []).push(field)
  return { fields, valueAt: new Int32Array(fields.length), types: new Uint8Array(fields.length), byLength }
}

/** The end (the NUL) of the cstring starting at `at`. */
function cstringEnd (buf: Buffer, at: number): number {
  let i = at
  while (buf[i] !== 0) i++
  return i
}

/** The size of the value of an element of type `type` whose value starts at `at`. */
function valueSize (buf: Buffer, type: number, at: number): number {
  switch (type) {
    case T.Double: case T.Date: case T.Int64: case T.Timestamp: return 8
    case T.String: case T.Code: case T.Symbol: return 4 + buf.readInt32LE(at)
    case T.Document: case T.Array: case T.CodeWithScope: return buf.readInt32LE(at)
    case T.Binary: return 5 + buf.readInt32LE(at)
    case T.Undefined: case T.Null: case T.MinKey: case T.MaxKey: return 0
    case T.ObjectId: return 12
    case T.Boolean: return 1
    case T.Regex: { const end = cstringEnd(buf, cstringEnd(buf, at) + 1); return end + 1 - at }
    case T.DBPointer: return 4 + buf.readInt32LE(at) + 12
    case T.Int32: return 4
    case T.Decimal128: return 16
    default: throw new Error(`bson-json: unknown BSON type ${type}`)
  }
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

/** Records where each declared field's value starts in the document at `at`, and its type. */
function locate (plan: Plan, buf: Buffer, at: number): void {
  const { valueAt, types } = plan
  valueAt.fill(-1)
  const end = at + buf.readInt32LE(at) - 1
  let i = at + 4
  while (i < end) {
    const type = buf[i] as number
    const nameEnd = cstringEnd(buf, i + 1)
    const field = matchField(plan, buf, i + 1, nameEnd)
    if (field !== undefined) {
      valueAt[field.index] = nameEnd + 1
      types[field.index] = type
    }
    i = nameEnd + 1 + valueSize(buf, type, nameEnd + 1)
  }
}

// Characters JSON.stringify leaves as they are: printable ASCII but `"` and `\`.
const PLAIN = new Uint8Array(256)
for (let c = 0x20; c < 0x7f; c++) PLAIN[c] = c === 0x22 || c === 0x5c ? 0 : 1

const DAY_MS = 86_400_000
// 0000-01-01 and 10000-01-01 in ms since the epoch: the years Date#toISOString writes with 4 digits.
const YEAR_0 = -62_167_219_200_000
const YEAR_10000 = 253_402_300_800_000

/** An Int64 is decoded to a number within ±2^53 inclusive (js-bson's promoteLongs), else to a Long. */
function int64Value (buf: Buffer, at: number): string | undefined {
  const hi = buf.readInt32LE(at + 4)
  const lo = buf.readUInt32LE(at)
  if (hi < -0x200000 || hi > 0x200000 || (hi === 0x200000 && lo !== 0)) return undefined
  return String(hi * 4294967296 + lo)
}

// The JSON is written as bytes into one growing buffer (Out): text copied from the BSON as it
// is, no intermediate strings for the common values, nothing to encode again when it is sent.
const QUOTE = 0x22
const COMMA = 0x2c
const HEX = Buffer.from(Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).join(''), 'latin1')
interface Writes { latin1Write: (text: string, offset: number) => number, utf8Write: (text: string, offset: number) => number }

class Out {
  buf: Buffer
  pos = 0
  constructor (size: number) { this.buf = Buffer.allocUnsafe(size) }
  room (n: number): void {
    if (this.pos + n <= this.buf.length) return
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n))
    this.buf.copy(next, 0, 0, this.pos)
    this.buf = next
  }

  byte (c: number): void {
    this.room(1)
    this.buf[this.pos++] = c
  }

  /** Text known to be ASCII. */
  ascii (text: string): void {
    this.room(text.length)
    this.pos += (this.buf as unknown as Writes).latin1Write(text, this.pos)
  }

  utf8 (text: string): void {
    this.room(text.length * 3)
    this.pos += (this.buf as unknown as Writes).utf8Write(text, this.pos)
  }

  /** Bytes `start`…`end` of `source`: copied in a loop when short (Buffer#copy's checks cost more than the copy). */
  span (source: Uint8Array, start: number, end: number): void {
    const n = end - start
    this.room(n)
    if (n > SHORT_COPY) {
      this.buf.set(source.subarray(start, end), this.pos)
      this.pos += n
      return
    }
    const o = this.buf
    let p = this.pos
    for (let i = start; i < end; i++) o[p++] = source[i] as number
    this.pos = p
  }
}

const SHORT_COPY = 48

/**
 * The bytes `start`…`end` as a JSON string, escaped as JSON.stringify escapes: copied as they
 * are when plain. Bytes that are not UTF-8 give false for a string value (the decoder refuses
 * them) and U+FFFD for a name (`lenient`: the decoder does not check names).
 */
function putText (out: Out, buf: Buffer, start: number, end: number, lenient: boolean): boolean {
  // Copied while checked: most text is plain, and then this one pass is all.
  out.room(end - start + 2)
  const o = out.buf
  let p = out.pos
  o[p++] = QUOTE
  let i = start
  for (; i < end; i++) {
    const c = buf[i] as number
    if (PLAIN[c] !== 1) break
    o[p++] = c
  }
  if (i === end) {
    o[p++] = QUOTE
    out.pos = p
    return true
  }
  if (!lenient && !isUtf8(buf.subarray(start, end))) return false
  out.utf8(JSON.stringify(utf8(buf, start, end)))
  return true
}

/** A BSON string (its value starting at `at`: int32 size, bytes, NUL) as a JSON string. */
function putString (out: Out, buf: Buffer, at: number): boolean {
  return putText(out, buf, at + 4, at + 3 + buf.readInt32LE(at), false)
}

function putObjectId (out: Out, buf: Buffer, at: number): void {
  out.room(26)
  const o = out.buf
  let p = out.pos
  o[p++] = QUOTE
  for (let i = at; i < at + 12; i++) {
    const b = (buf[i] as number) * 2
    o[p++] = HEX[b] as number
    o[p++] = HEX[b + 1] as number
  }
  o[p++] = QUOTE
  out.pos = p
}

const DIGIT = 0x30

/** Two ASCII digits for each of 0…99. */
const PAIRS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1')

/** The two digits of `n` (0…99) at `at`. */
function putPair (o: Uint8Array, at: number, n: number): void {
  o[at] = PAIRS[n * 2] as number
  o[at + 1] = PAIRS[n * 2 + 1] as number
}

// `YYYY-MM-DD` of recently written days, by day number modulo DAYS_KEPT: the dates of a page
// mostly fall on few days, near each other.
const DAYS_KEPT = 1024
const keptDays = new Float64Array(DAYS_KEPT).fill(Number.NaN)
const keptDayText = new Uint8Array(DAYS_KEPT * 10)

/** `YYYY-MM-DD` of a day since the epoch (civil-from-days, H. Hinnant's algorithm), years 0–9999. */
function writeDay (days: number, o: Uint8Array, at: number): void {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0)
  const century = Math.floor(year / 100)
  putPair(o, at, century)
  putPair(o, at + 2, year - century * 100)
  o[at + 4] = 0x2d
  putPair(o, at + 5, month)
  o[at + 7] = 0x2d
  putPair(o, at + 8, day)
}

/**
 * `"YYYY-MM-DDTHH:MM:SS.mmmZ"` straight into the output, Date#toISOString's text (computed
 * without a Date for years 0–9999); false for a date the decoder makes invalid.
 */
function putDate (out: Out, buf: Buffer, at: number): boolean {
  const ms = buf.readInt32LE(at + 4) * 4294967296 + buf.readUInt32LE(at)
  if (!(ms >= -MAX_DATE_MS && ms <= MAX_DATE_MS)) return false
  if (ms < YEAR_0 || ms >= YEAR_10000) {
    out.ascii(`"${new Date(ms).toISOString()}"`)
    return true
  }
  const days = Math.floor(ms / DAY_MS)
  const slot = days & (DAYS_KEPT - 1)
  if (keptDays[slot] !== days) {
    writeDay(days, keptDayText, slot * 10)
    keptDays[slot] = days
  }
  // Milliseconds into the day: below 2^31, so integer arithmetic.
  const rest = ms - days * DAY_MS
  const hours = (rest / 3_600_000) | 0
  const minutes = ((rest - hours * 3_600_000) / 60_000) | 0
  const secondsMs = rest - hours * 3_600_000 - minutes * 60_000
  const seconds = (secondsMs / 1000) | 0
  const millis = secondsMs - seconds * 1000
  out.room(26)
  const o = out.buf
  const p = out.pos
  o[p] = QUOTE
  for (let i = 0; i < 10; i++) o[p + 1 + i] = keptDayText[slot * 10 + i] as number
  o[p + 11] = 0x54
  putPair(o, p + 12, hours)
  o[p + 14] = 0x3a
  putPair(o, p + 15, minutes)
  o[p + 17] = 0x3a
  putPair(o, p + 18, seconds)
  o[p + 20] = 0x2e
  o[p + 21] = DIGIT + ((millis / 100) | 0)
  putPair(o, p + 22, millis % 100)
  o[p + 24] = 0x5a
  o[p + 25] = QUOTE
  out.pos = p + 26
  return true
}

/** An Int32's digits, without a string in between. */
function putInt (out: Out, n: number): void {
  out.room(11)
  const o = out.buf
  let p = out.pos
  if (n < 0) {
    if (n === -2147483648) {
      out.ascii('-2147483648')
      return
    }
    o[p++] = 0x2d
    n = -n
  }
  let digits = 1
  for (let rest = n; rest >= 10; rest = (rest / 10) | 0) digits++
  p += digits
  out.pos = p
  do {
    o[--p] = DIGIT + n % 10
    n = (n / 10) | 0
  } while (n > 0)
}

/** A scalar of a declared field as JSON; false (nothing written) when its type does not fit the field. */
function putScalar (out: Out, kind: FieldKind, buf: Buffer, type: number, at: number): boolean {
  switch (kind) {
    // The decoder turns a (deprecated) BSON symbol into a string.
    case 'string': return (type === T.String || type === T.Symbol) && putString(out, buf, at)
    case 'ref':
      if (type !== T.ObjectId) return false
      putObjectId(out, buf, at)
      return true
    case 'date': return type === T.Date && putDate(out, buf, at)
    case 'boolean':
      if (type !== T.Boolean) return false
      out.ascii(buf[at] === 1 ? 'true' : 'false')
      return true
    case 'number': {
      let text: string | undefined
      if (type === T.Double) {
        const n = buf.readDoubleLE(at)
        if (Number.isFinite(n)) text = String(n)
      } else if (type === T.Int32) {
        putInt(out, buf.readInt32LE(at))
        return true
      } else if (type === T.Int64) {
        text = int64Value(buf, at)
      }
      if (text === undefined) return false
      out.ascii(text)
      return true
    }
    default: return false
  }
}

/** A BSON array of one scalar kind as JSON; false (nothing written) when any element does not fit. */
function putScalarArray (out: Out, kind: FieldKind, buf: Buffer, at: number): boolean {
  const mark = out.pos
  const end = at + buf.readInt32LE(at) - 1
  out.byte(0x5b)
  let i = at + 4
  let first = true
  while (i < end) {
    const type = buf[i] as number
    const valueAt = cstringEnd(buf, i + 1) + 1
    if (!first) out.byte(COMMA)
    first = false
    if (!putScalar(out, kind, buf, type, valueAt)) {
      out.pos = mark
      return false
    }
    i = valueAt + valueSize(buf, type, valueAt)
  }
  out.byte(0x5d)
  return true
}

/**
 * Whether the embedded document at `at` decodes to a DBRef rather than a plain object
 * (js-bson: `$ref` a string, `$id` present and not null, `$db` absent or a string).
 */
function isDBRefLike (buf: Buffer, at: number): boolean {
  const end = at + buf.readInt32LE(at) - 1
  let ref = false
  let id = false
  let db = true
  let i = at + 4
  while (i < end) {
    const type = buf[i] as number
    const nameEnd = cstringEnd(buf, i + 1)
    if (buf[i + 1] === 0x24 && nameEnd - i - 1 <= 4) { // `$`
      const name = latin1(buf, i + 1, nameEnd)
      if (name === '$ref') ref = type === T.String
      else if (name === '$id') id = type !== T.Null && type !== T.Undefined
      else if (name === '$db') db = type === T.String
    }
    i = nameEnd + 1 + valueSize(buf, type, nameEnd + 1)
  }
  return ref && id && db
}

/**
 * Any BSON value as JSON.stringify writes its decoded form, for the common types; false for the
 * others, with part of the value possibly written (putCustom rolls back).
 */
function putAny (out: Out, buf: Buffer, type: number, at: number): boolean {
  switch (type) {
    case T.Double: {
      const n = buf.readDoubleLE(at)
      out.ascii(Number.isFinite(n) ? String(n) : 'null')
      return true
    }
    case T.String: case T.Symbol: return putString(out, buf, at)
    case T.ObjectId:
      putObjectId(out, buf, at)
      return true
    case T.Date:
      // JSON.stringify writes an invalid Date as null.
      if (!putDate(out, buf, at)) out.ascii('null')
      return true
    case T.Null:
      out.ascii('null')
      return true
    // An Int64 beyond ±2^53 decodes to a Long: the rare path.
    case T.Boolean: case T.Int32: case T.Int64: return putScalar(out, type === T.Boolean ? 'boolean' : 'number', buf, type, at)
    case T.Document: return !isDBRefLike(buf, at) && putAnyDocument(out, buf, at)
    case T.Array: {
      const end = at + buf.readInt32LE(at) - 1
      out.byte(0x5b)
      let i = at + 4
      while (i < end) {
        const itemType = buf[i] as number
        const valueAt = cstringEnd(buf, i + 1) + 1
        if (i > at + 4) out.byte(COMMA)
        if (!putAny(out, buf, itemType, valueAt)) return false
        i = valueAt + valueSize(buf, itemType, valueAt)
      }
      out.byte(0x5d)
      return true
    }
    default: return false
  }
}

function putAnyDocument (out: Out, buf: Buffer, at: number): boolean {
  const end = at + buf.readInt32LE(at) - 1
  out.byte(0x7b)
  let i = at + 4
  while (i < end) {
    const type = buf[i] as number
    const nameEnd = cstringEnd(buf, i + 1)
    if (i > at + 4) out.byte(COMMA)
    // (A repeated name is written twice; JSON.parse then keeps, as the decoder does, the last value in the first place.)
    putText(out, buf, i + 1, nameEnd, true)
    out.byte(0x3a)
    if (!putAny(out, buf, type, nameEnd + 1)) return false
    i = nameEnd + 1 + valueSize(buf, type, nameEnd + 1)
  }
  out.byte(0x7d)
  return true
}

/** `customFields`: a plain document, written as JSON.stringify writes its decoded form; false (nothing written) otherwise. */
function putCustom (out: Out, buf: Buffer, type: number, at: number): boolean {
  if (type !== T.Document || isDBRefLike(buf, at)) return false
  const mark = out.pos
  if (putAnyDocument(out, buf, at)) return true
  out.pos = mark
  // The rare types: decode this one value as the driver would, and write it as the serializer does.
  try {
    out.utf8(JSON.stringify(BSON.deserialize(buf.subarray(at, at + buf.readInt32LE(at)), DECODE_OPTIONS)))
    return true
  } catch {
    return false
  }
}

/** The `_id` of the document the top-level plan last located. */
function idOf (plan: Plan, buf: Buffer, idIndex: number): unknown {
  const valueAt = plan.valueAt[idIndex] as number
  if (idIndex < 0 || valueAt < 0) return undefined
  const type = plan.types[idIndex]
  if (type === T.ObjectId) return new ObjectId(buf.subarray(valueAt, valueAt + 12))
  if (type === T.String) return utf8(buf, valueAt + 4, valueAt + 3 + buf.readInt32LE(valueAt))
  return undefined
}

/** Hears of a value left out, by its field's dotted path. */
type Report = (path: string) => void

function putDocument (out: Out, plan: Plan, buf: Buffer, at: number, omit: ReadonlySet<string> | undefined, report: Report): void {
  locate(plan, buf, at)
  const { fields, valueAt: values, types } = plan
  out.byte(0x7b)
  let first = true
  for (let f = 0; f < fields.length; f++) {
    const valueAt = values[f] as number
    if (valueAt < 0) continue
    const field = fields[f] as Field
    if (omit !== undefined && omit.has(field.name)) continue
    const type = types[f] as number
    const mark = out.pos
    if (!first) out.byte(COMMA)
    out.span(field.keyBytes, 0, field.keyBytes.length)
    let fits: boolean
    switch (field.kind) {
      case 'string[]': fits = type === T.Array && putScalarArray(out, 'string', buf, valueAt); break
      case 'ref[]': fits = type === T.Array && putScalarArray(out, 'ref', buf, valueAt); break
      case 'custom': fits = putCustom(out, buf, type, valueAt); break
      case 'object[]': fits = type === T.Array && putDocumentArray(out, field, buf, valueAt, report); break
      default: fits = putScalar(out, field.kind, buf, type, valueAt)
    }
    if (!fits) {
      out.pos = mark
      report(field.path)
      continue
    }
    first = false
  }
  out.byte(0x7d)
}

/** An array of embedded documents of a declared shape; false (nothing written) when an item is not a plain document. */
function putDocumentArray (out: Out, field: Field, buf: Buffer, at: number, report: Report): boolean {
  const end = at + buf.readInt32LE(at) - 1
  let i = at + 4
  while (i < end) {
    const type = buf[i] as number
    const valueAt = cstringEnd(buf, i + 1) + 1
    if (type !== T.Document || isDBRefLike(buf, valueAt)) return false
    i = valueAt + valueSize(buf, type, valueAt)
  }
  const inner = field.inner as Plan
  out.byte(0x5b)
  i = at + 4
  let first = true
  while (i < end) {
    const valueAt = cstringEnd(buf, i + 1) + 1
    if (!first) out.byte(COMMA)
    first = false
    putDocument(out, inner, buf, valueAt, undefined, report)
    i = valueAt + buf.readInt32LE(valueAt)
  }
  out.byte(0x5d)
  return true
}

/** A page of raw documents: the BSON they are in, and where each starts. */
export interface Page {
  bytes: Buffer
  starts: number[]
}

/** A page of separately held raw documents (what a driver cursor with `raw` gives). */
export function pageOf (docs: Buffer[]): Page {
  const starts: number[] = []
  let at = 0
  for (const doc of docs) {
    starts.push(at)
    at += doc.length
  }
  return { bytes: Buffer.concat(docs, at), starts }
}

/**
 * The first batch of a cursor reply (`{firstBatch: [...], id, ns}`, as raw BSON) as a page,
 * and the cursor's id: 0 when the server closed it, having nothing more to give.
 */
export function firstBatch (cursor: Buffer): { page: Page, id: bigint } {
  const starts: number[] = []
  let id = 0n
  let batch = false
  const end = cursor.readInt32LE(0) - 1
  let i = 4
  while (i < end) {
    const type = cursor[i] as number
    const nameEnd = cstringEnd(cursor, i + 1)
    const valueAt = nameEnd + 1
    const name = latin1(cursor, i + 1, nameEnd)
    if (name === 'firstBatch' && type === T.Array) {
      batch = true
      const arrayEnd = valueAt + cursor.readInt32LE(valueAt) - 1
      let j = valueAt + 4
      while (j < arrayEnd) {
        if (cursor[j] !== T.Document) throw new Error('bson-json: a cursor batch holds something other than documents')
        const docAt = cstringEnd(cursor, j + 1) + 1
        starts.push(docAt)
        j = docAt + cursor.readInt32LE(docAt)
      }
    } else if (name === 'id' && type === T.Int64) {
      id = cursor.readBigInt64LE(valueAt)
    }
    i = valueAt + valueSize(cursor, type, valueAt)
  }
  if (!batch) throw new Error('bson-json: the cursor reply has no firstBatch')
  return { page: { bytes: cursor, starts }, id }
}

/**
 * The documents held by one field of each document of a page (`{_id, page: {…}}` as a
 * `$lookup` unwound gives them), where they lie: a document without the field holds none.
 */
export function innerPage ({ bytes, starts }: Page, field: string): Page {
  const inner: number[] = []
  for (const start of starts) {
    const end = start + bytes.readInt32LE(start) - 1
    let i = start + 4
    while (i < end) {
      const type = bytes[i] as number
      const nameEnd = cstringEnd(bytes, i + 1)
      if (type === T.Document && latin1(bytes, i + 1, nameEnd) === field) {
        inner.push(nameEnd + 1)
        break
      }
      i = nameEnd + 1 + valueSize(bytes, type, nameEnd + 1)
    }
  }
  return { bytes, starts: inner }
}

export interface Transcoder {
  /**
   * `head`, then the JSON array of the page's documents, then `tail`, as UTF-8 bytes. `omit`
   * names top-level fields read only for the cursor; `report` hears of every value left out.
   */
  (page: Page, omit: ReadonlySet<string> | undefined, report: (misfit: Misfit) => void, head?: string, tail?: string): Buffer
}

/** The transcoder of one kind's documents. */
export function bsonToJson (schema: TObject): Transcoder {
  const plan = compilePlan(schema)
  const idIndex = plan.fields.findIndex((field) => field.name === '_id')
  return ({ bytes, starts }, omit, report, head = '', tail = '') => {
    // While a document is written, the top-level plan holds where its _id is.
    const misfit: Report = (field) => { report({ field, id: idOf(plan, bytes, idIndex) }) }
    let size = head.length + tail.length + 2
    for (const at of starts) size += bytes.readInt32LE(at)
    // JSON is usually longer than BSON (an ObjectId is 12 bytes, then 26 characters).
    const out = new Out(Math.ceil(size * 1.6) + 64)
    out.utf8(head)
    out.byte(0x5b)
    for (let d = 0; d < starts.length; d++) {
      const at = starts[d] as number
      if (d > 0) out.byte(COMMA)
      putDocument(out, plan, bytes, at, omit, misfit)
    }
    out.byte(0x5d)
    out.utf8(tail)
    return out.buf.subarray(0, out.pos)
  }
}

/** A raw document decoded as the driver would have decoded it (for cursors and the rare paths). */
export function decodeRaw (doc: Buffer): Document {
  return BSON.deserialize(doc, DECODE_OPTIONS)
}

/**
 * The top-level fields `names` of the page's document `index`, decoded as the driver would
 * decode them (the others are not decoded at all): the sort keys of a page's last document.
 */
export function decodeFields ({ bytes, starts }: Page, index: number, names: ReadonlySet<string>): Document {
  const at = starts[index] as number
  const end = at + bytes.readInt32LE(at) - 1
  const kept: Buffer[] = []
  let size = 5
  let i = at + 4
  while (i < end) {
    const type = bytes[i] as number
    const nameEnd = cstringEnd(bytes, i + 1)
    const next = nameEnd + 1 + valueSize(bytes, type, nameEnd + 1)
    if (names.has(utf8(bytes, i + 1, nameEnd))) {
      kept.push(bytes.subarray(i, next))
      size += next - i
    }
    i = next
  }
  const doc = Buffer.allocUnsafe(size)
  doc.writeInt32LE(size, 0)
  let p = 4
  for (const element of kept) p += element.copy(doc, p)
  doc[p] = 0
  return decodeRaw(doc)
}

/** The page's document `index`, decoded as the driver would have decoded it. */
export function decodeAt ({ bytes, starts }: Page, index: number): Document {
  const at = starts[index] as number
  return decodeRaw(bytes.subarray(at, at + bytes.readInt32LE(at)))
}

/**
 * Schema-less (the raw floor's writer): `head`, the JSON array JSON.stringify gives for the
 * documents' decoded forms, then `tail`.
 */
export function documentsToJson (docs: Buffer[], head: string, tail: string): Buffer {
  const out = new Out(docs.reduce((size, doc) => size + doc.length, 0) * 2 + 64)
  out.utf8(head)
  out.byte(0x5b)
  for (let d = 0; d < docs.length; d++) {
    const doc = docs[d] as Buffer
    if (d > 0) out.byte(COMMA)
    const mark = out.pos
    if (!putAnyDocument(out, doc, 0)) {
      out.pos = mark
      out.utf8(JSON.stringify(decodeRaw(doc)))
    }
  }
  out.byte(0x5d)
  out.utf8(tail)
  return out.buf.subarray(0, out.pos)
}
