// Reading raw BSON where it lies: the element walk (names, types, value sizes) that the pages
// (bson-page.ts), the JSON writer (bson-json.ts) and the cursors read documents with; no
// JavaScript object is built.
import { BSON } from 'mongodb'

export const enum T {
  Double = 1, String = 2, Document = 3, Array = 4, Binary = 5, Undefined = 6, ObjectId = 7, Boolean = 8, Date = 9,
  Null = 10, Regex = 11, DBPointer = 12, Code = 13, Symbol = 14, CodeWithScope = 15, Int32 = 16, Timestamp = 17,
  Int64 = 18, Decimal128 = 19, MinKey = 255, MaxKey = 127
}

export const MAX_DATE_MS = 8.64e15

/** A name or a string of raw BSON as text. */
export const latin1 = (buf: Buffer, start: number, end: number): string => buf.toString('latin1', start, end)
export const utf8 = (buf: Buffer, start: number, end: number): string => buf.toString('utf8', start, end)
/**
 * The driver's defaults for decoding replies (what the schema path sees), but a regular
 * expression as a BSONRegExp: its options as stored (a RegExp drops `x` and writes `s` as `g`).
 */
export const DECODE_OPTIONS = {
  promoteLongs: true,
  promoteValues: true,
  promoteBuffers: false,
  bsonRegExp: true,
  useBigInt64: false,
  validation: { utf8: true }
} as const

/**
 * Raw BSON that does not hold together: a length past its document or buffer, a name without its
 * NUL, an unknown type. A BSONError, as the driver's decoding failures are: a database fault.
 */
export class MalformedBson extends BSON.BSONError {
  override get name (): string { return 'MalformedBson' }
  constructor (message: string) { super(`malformed BSON: ${message}`) }
}

// The walk's helpers are small, and their error messages are made out of line, so that the
// compiler inlines them into every loop over elements.
function malformed (message: string): never {
  throw new MalformedBson(message)
}

/** The end (the NUL) of the cstring starting at `at`, which must come before `end`. */
export function cstringEnd (buf: Buffer, at: number, end: number = buf.length): number {
  let i = at
  while (i < end && buf[i] !== 0) i++
  if (i >= end) malformed(`a name or pattern at ${at} has no NUL before ${end}`)
  return i
}

/**
 * The little-endian int32 at `at`, bounded by the caller (readInt32LE checks again, through a
 * wrapper).
 */
export function int32At (buf: Buffer, at: number): number {
  return (buf[at] as number) | ((buf[at + 1] as number) << 8) |
    ((buf[at + 2] as number) << 16) | ((buf[at + 3] as number) << 24)
}

/** A length prefix at `at` that must lie before `end`. */
function lengthAt (buf: Buffer, at: number, end: number): number {
  if (at + 4 > end) malformed(`a length at ${at} runs past ${end}`)
  return int32At(buf, at)
}

// The size of each fixed-size type's value, -1 for the others: most elements are read here.
const FIXED_SIZES = new Int8Array(256).fill(-1)
for (const [type, size] of [
  [T.Double, 8], [T.Date, 8], [T.Int64, 8], [T.Timestamp, 8], [T.ObjectId, 12], [T.Boolean, 1], [T.Int32, 4],
  [T.Decimal128, 16], [T.Undefined, 0], [T.Null, 0], [T.MinKey, 0], [T.MaxKey, 0]
] as const) FIXED_SIZES[type] = size

/** The size of the value of an element of type `type` whose value starts at `at`; it must end by `end`. */
export function valueSize (buf: Buffer, type: number, at: number, end: number = buf.length): number {
  // A type byte is 0–255: anything else is no fixed size.
  const fixed = FIXED_SIZES[type] ?? -1
  if (fixed >= 0) {
    if (at + fixed > end) malformed(`a value at ${at} of ${fixed} bytes runs past ${end}`)
    return fixed
  }
  // The types of variable size.
  let size: number
  switch (type) {
    case T.String: case T.Code: case T.Symbol: {
      const length = lengthAt(buf, at, end)
      if (length < 1) malformed(`a string at ${at} has length ${length}`)
      size = 4 + length
      break
    }
    case T.Document: case T.Array: case T.CodeWithScope:
      size = lengthAt(buf, at, end)
      if (size < 5) malformed(`a document at ${at} has length ${size}`)
      break
    case T.Binary: {
      const length = lengthAt(buf, at, end)
      if (length < 0) malformed(`a binary at ${at} has length ${length}`)
      size = 5 + length
      break
    }
    case T.Regex: size = cstringEnd(buf, cstringEnd(buf, at, end) + 1, end) + 1 - at; break
    case T.DBPointer: {
      const length = lengthAt(buf, at, end)
      if (length < 1) malformed(`a DBPointer at ${at} has length ${length}`)
      size = 4 + length + 12
      break
    }
    default: malformed(`unknown BSON type ${type} at ${at - 1}`)
  }
  if (at + size > end) malformed(`a value at ${at} of ${size} bytes runs past ${end}`)
  return size
}

/**
 * The elements of one BSON document or array, in order: the walk every reader of raw BSON here
 * shares. Each step's offsets are checked against the document's own length, and that length
 * against `limit` (the enclosing document's end, or the buffer's), so that a truncated or hostile
 * reply ends in MalformedBson rather than in a read outside it.
 *
 *   for (const e = new Elements(buf, at); e.next();) use(e.type, e.nameAt, e.nameEnd, e.valueAt, e.valueEnd)
 */
export class Elements {
  /** The element's type byte. */
  type = 0
  /** Its name, from nameAt to nameEnd (its NUL), and its value, from valueAt to valueEnd (exclusive). */
  nameAt = 0
  nameEnd = 0
  valueAt = 0
  valueEnd = 0
  /** The document's terminating NUL. */
  end = 0
  buf: Buffer

  constructor (buf: Buffer, at: number, limit: number = buf.length) {
    this.buf = buf
    this.reset(buf, at, limit)
  }

  /**
   * Starts again on the document at `at`: a walk kept by a loop (no other walk inside) makes no
   * object per document.
   */
  reset (buf: Buffer, at: number, limit: number = buf.length): this {
    const size = lengthAt(buf, at, limit)
    if (size < 5 || at + size > limit) malformed(`a document at ${at} of ${size} bytes does not fit before ${limit}`)
    const end = at + size - 1
    if (buf[end] !== 0) malformed(`the document at ${at} does not end with NUL`)
    this.buf = buf
    this.end = end
    this.valueEnd = at + 4
    return this
  }

  /** Moves to the next element: false after the last. */
  next (): boolean {
    const i = this.valueEnd
    if (i >= this.end) return false
    const buf = this.buf
    const type = buf[i] as number
    const nameEnd = cstringEnd(buf, i + 1, this.end)
    this.type = type
    this.nameAt = i + 1
    this.nameEnd = nameEnd
    this.valueAt = nameEnd + 1
    this.valueEnd = nameEnd + 1 + valueSize(buf, type, nameEnd + 1, this.end)
    return true
  }
}

/** An Int64 is decoded to a number within ±2^53 inclusive (js-bson's promoteLongs), else to a Long. */
export function int64Value (buf: Buffer, at: number): string | undefined {
  const hi = buf.readInt32LE(at + 4)
  const lo = buf.readUInt32LE(at)
  if (hi < -0x200000 || hi > 0x200000 || (hi === 0x200000 && lo !== 0)) return undefined
  return String(hi * 4294967296 + lo)
}

const EMPTY_DOCUMENT = Buffer.from([5, 0, 0, 0, 0])
/** A walk for a loop that starts it again on each document (`reset`), made once. */
export function reusableWalk (): Elements {
  return new Elements(EMPTY_DOCUMENT, 0)
}

/**
 * Whether the embedded document at `at` decodes to a DBRef rather than a plain object
 * (js-bson: `$ref` a string, `$id` present and not null, `$db` absent or a string).
 */
const dbRefWalk = reusableWalk()
export function isDBRefLike (buf: Buffer, at: number, limit: number = buf.length): boolean {
  let ref = false
  let id = false
  let db = true
  for (const e = dbRefWalk.reset(buf, at, limit); e.next();) {
    if (buf[e.nameAt] === 0x24 && e.nameEnd - e.nameAt <= 4) { // `$`
      const name = latin1(buf, e.nameAt, e.nameEnd)
      if (name === '$ref') ref = e.type === T.String
      else if (name === '$id') id = e.type !== T.Null && e.type !== T.Undefined
      else if (name === '$db') db = e.type === T.String
    }
  }
  return ref && id && db
}
