// Reading raw BSON where it lies: the element walk (names, types, value sizes), the pages of
// documents a cursor reply holds, and decoding as the driver decodes when the JSON writer
// (bson-json.ts) cannot be used. No JavaScript object is built until something is decoded.
import { isUtf8 } from 'node:buffer'
import { BSON, type Document } from 'mongodb'
import { askedShims } from '../database/driver-shims.js'

export const enum T { Double = 1, String = 2, Document = 3, Array = 4, Binary = 5, Undefined = 6, ObjectId = 7, Boolean = 8, Date = 9, Null = 10, Regex = 11, DBPointer = 12, Code = 13, Symbol = 14, CodeWithScope = 15, Int32 = 16, Timestamp = 17, Int64 = 18, Decimal128 = 19, MinKey = 255, MaxKey = 127 }

export const MAX_DATE_MS = 8.64e15

// Buffer's own slice methods (what buf.toString(encoding, start, end) dispatches to), called
// directly: the dispatch was a tenth of the transcoder's time. They are not documented: used only
// when they are there and give toString's answers (checked here, at load), and not with
// SHIMS=none (database/driver-shims.ts). Else toString itself.
interface Slices { latin1Slice: (start: number, end: number) => string, utf8Slice: (start: number, end: number) => string }
function slicesWork (): boolean {
  if (!askedShims(process.env.SHIMS ?? 'all').includes('buffer-slices')) return false
  const slices = Buffer.prototype as unknown as Partial<Slices>
  if (typeof slices.latin1Slice !== 'function' || typeof slices.utf8Slice !== 'function') return false
  const probe = Buffer.from('x\u00e9\u{1f600}\u00ffz', 'utf8')
  const own = probe as unknown as Slices
  return own.utf8Slice(1, probe.length - 1) === probe.toString('utf8', 1, probe.length - 1) && own.latin1Slice(0, probe.length) === probe.toString('latin1')
}
/** Whether the BSON reader calls Buffer's slice methods directly (else toString). */
export const BUFFER_SLICES = slicesWork()
export const latin1 = BUFFER_SLICES
  ? (buf: Buffer, start: number, end: number): string => (buf as unknown as Slices).latin1Slice(start, end)
  : (buf: Buffer, start: number, end: number): string => buf.toString('latin1', start, end)
export const utf8 = BUFFER_SLICES
  ? (buf: Buffer, start: number, end: number): string => (buf as unknown as Slices).utf8Slice(start, end)
  : (buf: Buffer, start: number, end: number): string => buf.toString('utf8', start, end)
/** The driver's defaults for decoding replies (what the schema path sees). */
export const DECODE_OPTIONS = { promoteLongs: true, promoteValues: true, promoteBuffers: false, bsonRegExp: false, useBigInt64: false, validation: { utf8: true } } as const

/** The end (the NUL) of the cstring starting at `at`. */
export function cstringEnd (buf: Buffer, at: number): number {
  let i = at
  while (buf[i] !== 0) i++
  return i
}

/** The size of the value of an element of type `type` whose value starts at `at`. */
export function valueSize (buf: Buffer, type: number, at: number): number {
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

/** An Int64 is decoded to a number within ±2^53 inclusive (js-bson's promoteLongs), else to a Long. */
export function int64Value (buf: Buffer, at: number): string | undefined {
  const hi = buf.readInt32LE(at + 4)
  const lo = buf.readUInt32LE(at)
  if (hi < -0x200000 || hi > 0x200000 || (hi === 0x200000 && lo !== 0)) return undefined
  return String(hi * 4294967296 + lo)
}

/**
 * Whether the embedded document at `at` decodes to a DBRef rather than a plain object
 * (js-bson: `$ref` a string, `$id` present and not null, `$db` absent or a string).
 */
export function isDBRefLike (buf: Buffer, at: number): boolean {
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
        if (cursor[j] !== T.Document) throw new Error('bson-page: a cursor batch holds something other than documents')
        const docAt = cstringEnd(cursor, j + 1) + 1
        starts.push(docAt)
        j = docAt + cursor.readInt32LE(docAt)
      }
    } else if (name === 'id' && type === T.Int64) {
      id = cursor.readBigInt64LE(valueAt)
    }
    i = valueAt + valueSize(cursor, type, valueAt)
  }
  if (!batch) throw new Error('bson-page: the cursor reply has no firstBatch')
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

/** A raw document decoded as the driver would have decoded it (for cursors and the rare paths). */
export function decodeRaw (doc: Buffer): Document {
  return BSON.deserialize(doc, DECODE_OPTIONS)
}

/**
 * Where the last element named `names[k]` lies in the page's document `index` (the one decoding
 * keeps when a name repeats): at 3k the offset of its type byte, at 3k+1 and 3k+2 the start and
 * end of its value; -1 when the document has no such element.
 */
function lastElements ({ bytes, starts }: Page, index: number, names: readonly string[]): Int32Array {
  const at = starts[index] as number
  const end = at + bytes.readInt32LE(at) - 1
  const found = new Int32Array(names.length * 3).fill(-1)
  let i = at + 4
  while (i < end) {
    const type = bytes[i] as number
    const nameEnd = cstringEnd(bytes, i + 1)
    const next = nameEnd + 1 + valueSize(bytes, type, nameEnd + 1)
    const k = names.indexOf(utf8(bytes, i + 1, nameEnd))
    if (k >= 0) {
      found[3 * k] = i
      found[3 * k + 1] = nameEnd + 1
      found[3 * k + 2] = next
    }
    i = next
  }
  return found
}

/**
 * The top-level fields `names` of the page's document `index`, decoded as the driver would
 * decode them unless `options` say otherwise (the others are not decoded at all): the sort keys
 * of a page's last document.
 */
export function decodeFields (page: Page, index: number, names: readonly string[], options: BSON.DeserializeOptions = DECODE_OPTIONS): Document {
  const { bytes } = page
  const found = lastElements(page, index, names)
  let size = 5
  for (let k = 0; k < names.length; k++) if ((found[3 * k] as number) >= 0) size += (found[3 * k + 2] as number) - (found[3 * k] as number)
  const doc = Buffer.allocUnsafe(size)
  doc.writeInt32LE(size, 0)
  let p = 4
  for (let k = 0; k < names.length; k++) if ((found[3 * k] as number) >= 0) p += bytes.copy(doc, p, found[3 * k] as number, found[3 * k + 2] as number)
  doc[p] = 0
  return BSON.deserialize(doc, options)
}

/**
 * The values of the top-level fields `names` in the page's document `index`, as the BSON
 * document `{"0": …, "1": …}` a cursor holds (a missing field is null; the last of a repeated
 * name wins, as in decoding), copied as they lie: nothing is decoded and encoded again.
 * undefined when a name is a dotted path or a text is not UTF-8 (decodeFields then).
 */
export function topLevelValues (page: Page, index: number, names: readonly string[]): Buffer | undefined {
  if (names.some((name) => name.includes('.'))) return undefined
  const { bytes } = page
  const found = lastElements(page, index, names)
  let size = 5
  for (let k = 0; k < names.length; k++) {
    size += 2 + String(k).length
    const start = found[3 * k + 1] as number
    if (start < 0) continue
    if (bytes[found[3 * k] as number] === T.String && !isUtf8(bytes.subarray(start + 4, (found[3 * k + 2] as number) - 1))) return undefined
    size += (found[3 * k + 2] as number) - start
  }
  const doc = Buffer.allocUnsafe(size)
  doc.writeInt32LE(size, 0)
  let p = 4
  for (let k = 0; k < names.length; k++) {
    const start = found[3 * k + 1] as number
    doc[p++] = start < 0 ? T.Null : bytes[found[3 * k] as number] as number
    p += doc.write(String(k), p, 'latin1')
    doc[p++] = 0
    if (start >= 0) p += bytes.copy(doc, p, start, found[3 * k + 2] as number)
  }
  doc[p] = 0
  return doc
}

/** The page's document `index`, decoded as the driver would have decoded it. */
export function decodeAt ({ bytes, starts }: Page, index: number): Document {
  const at = starts[index] as number
  return decodeRaw(bytes.subarray(at, at + bytes.readInt32LE(at)))
}
