// The pages of documents a cursor reply holds, read where they lie (bson-elements.ts walks
// them), and decoding as the driver decodes when the JSON writer (bson-json.ts) cannot be used.
import { isUtf8 } from 'node:buffer'
import { BSON, type Document } from 'mongodb'
import { DECODE_OPTIONS, Elements, MalformedBson, T, latin1, utf8 } from './bson-elements.js'

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
  for (const e = new Elements(cursor, 0); e.next();) {
    const name = latin1(cursor, e.nameAt, e.nameEnd)
    if (name === 'firstBatch' && e.type === T.Array) {
      batch = true
      for (const item = new Elements(cursor, e.valueAt, e.valueEnd); item.next();) {
        if (item.type !== T.Document) throw new MalformedBson('a cursor batch holds something other than documents')
        starts.push(item.valueAt)
      }
    } else if (name === 'id' && e.type === T.Int64) {
      id = cursor.readBigInt64LE(e.valueAt)
    }
  }
  if (!batch) throw new MalformedBson('the cursor reply has no firstBatch')
  return { page: { bytes: cursor, starts }, id }
}

/**
 * The documents held by one field of each document of a page (`{_id, page: {…}}` as a
 * `$lookup` unwound gives them), where they lie: a document without the field holds none.
 */
export function innerPage ({ bytes, starts }: Page, field: string): Page {
  const inner: number[] = []
  for (const start of starts) {
    for (const e = new Elements(bytes, start); e.next();) {
      if (e.type === T.Document && latin1(bytes, e.nameAt, e.nameEnd) === field) {
        inner.push(e.valueAt)
        break
      }
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
  const found = new Int32Array(names.length * 3).fill(-1)
  for (const e = new Elements(bytes, starts[index] as number); e.next();) {
    const k = names.indexOf(utf8(bytes, e.nameAt, e.nameEnd))
    if (k >= 0) {
      found[3 * k] = e.nameAt - 1
      found[3 * k + 1] = e.valueAt
      found[3 * k + 2] = e.valueEnd
    }
  }
  return found
}

/**
 * The top-level fields `names` of the page's document `index`, decoded as the driver would
 * decode them unless `options` say otherwise (the others are not decoded at all): the sort keys
 * of a page's last document.
 */
export function decodeFields (
  page: Page,
  index: number,
  names: readonly string[],
  options: BSON.DeserializeOptions = DECODE_OPTIONS
): Document {
  const { bytes } = page
  const found = lastElements(page, index, names)
  let size = 5
  for (let k = 0; k < names.length; k++) {
    if ((found[3 * k] as number) >= 0) size += (found[3 * k + 2] as number) - (found[3 * k] as number)
  }
  const doc = Buffer.allocUnsafe(size)
  doc.writeInt32LE(size, 0)
  let p = 4
  for (let k = 0; k < names.length; k++) {
    if ((found[3 * k] as number) >= 0) p += bytes.copy(doc, p, found[3 * k] as number, found[3 * k + 2] as number)
  }
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
    const end = found[3 * k + 2] as number
    if (bytes[found[3 * k] as number] === T.String && !isUtf8(bytes.subarray(start + 4, end - 1))) return undefined
    size += end - start
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
