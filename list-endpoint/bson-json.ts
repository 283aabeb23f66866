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
// - `customFields` as stored, as JSON.stringify writes the decoded values, but what JSON has no
//   form for (an Int64 beyond ±2^53, NaN, a timestamp, …) in Extended JSON (off-schema.ts'
//   exactCustom); types other than the common ones (Decimal128, Binary, Regex, Timestamp, …)
//   take the decoder's path.
// test/list-endpoint/bson-json.test.ts checks all of it against the schema serializer.
import type { TObject } from '@sinclair/typebox'
import { Elements, T, int32At, isDBRefLike, reusableWalk } from './bson-elements.js'
import { decodeRaw, type Page } from './bson-page.js'
import { compilePlan, idOf, locate, type Field, type Plan } from './bson-plan.js'
import { COMMA, Out } from './json-out.js'
import type { KeptDocuments } from './kept-documents.js'
import { putAnyDocument, putCustom, putScalar, putScalarArray } from './json-values.js'
import { exactCustom, type Misfit } from './off-schema.js'

/** Hears of a value left out, by its field's dotted path. */
type Report = (path: string) => void

/** Writes the document at `at`; true when a name of it starts with `$` (it may decode to a DBRef). */
function putDocument (
  out: Out, plan: Plan, buf: Buffer, at: number, omit: ReadonlySet<string> | undefined, report: Report
): boolean {
  const dollar = locate(plan, buf, at)
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
    out.span(field.keyBytes, first ? 1 : 0, field.keyBytes.length)
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
  return dollar
}

const itemsWalk = reusableWalk()

// The misfits inside an array of documents, held until every item has proved a plain document:
// an array that is not one is left out whole, and only it is reported.
const held: string[] = []
const hold: Report = (path) => { held.push(path) }

/**
 * An array of embedded documents of a declared shape; false when an item is not a plain
 * document (what was written of it is then the caller's to take back, as for any misfit).
 */
function putDocumentArray (out: Out, field: Field, buf: Buffer, at: number, report: Report): boolean {
  // Every item's type first: an array that is no array of documents is left out before any
  // item of it is read (a malformed item in it is then never reached, as when decoding it).
  for (const e = itemsWalk.reset(buf, at); e.next();) {
    if (e.type !== T.Document) return false
  }
  const inner = field.inner as Plan
  const from = held.length
  out.byte(0x5b)
  let first = true
  for (const e = new Elements(buf, at); e.next();) {
    if (!first) out.byte(COMMA)
    first = false
    // Only a document with a `$` name can be a DBRef: the walk that writes it says so.
    if (putDocument(out, inner, buf, e.valueAt, undefined, hold) && isDBRefLike(buf, e.valueAt, e.valueEnd)) {
      held.length = from
      return false
    }
  }
  out.byte(0x5d)
  // Inside another such array, the misfits stay held for it.
  if (report !== hold) {
    for (let i = from; i < held.length; i++) report(held[i] as string)
    held.length = from
  }
  return true
}

export interface Transcoder {
  /**
   * `head`, then the JSON array of the page's documents, then `tail`, as UTF-8 bytes. `omit`
   * names top-level fields read only for the cursor; `report` hears of every value left out.
   */
  (
    page: Page, omit: ReadonlySet<string> | undefined, report: (misfit: Misfit) => void,
    head?: string, tail?: string, bounds?: number[]
  ): Buffer
}

/** The transcoder of one kind's documents; with `kept`, a document already written with the same bytes is copied. */
export function bsonToJson (schema: TObject, kept?: KeptDocuments): Transcoder {
  const plan = compilePlan(schema)
  const idIndex = plan.fields.findIndex((field) => field.name === '_id')
  const tag = kept?.tagOf(schema) ?? 0
  // `bounds`, when given, receives where each document's JSON starts and ends in the output
  // (a change feed writes each document into an event of its own).
  return ({ bytes, starts }, omit, report, head = '', tail = '', bounds) => {
    let misfits = 0
    // While a document is written, the top-level plan holds where its _id is.
    const misfit: Report = (field) => {
      misfits++
      report({ field, id: idOf(plan, bytes, idIndex) })
    }
    // Kept JSON holds every declared field: a page that leaves some out writes its own.
    const keyed = omit === undefined ? kept : undefined
    const write = (out: Out, at: number): void => {
      const key = keyed?.keyOf(tag, bytes, at)
      if (key === undefined || keyed === undefined) {
        putDocument(out, plan, bytes, at, omit, misfit)
        return
      }
      if (keyed.reuse(out, tag, key, bytes, at)) return
      const from = out.pos
      const before = misfits
      if (!putDocument(out, plan, bytes, at, omit, misfit) && misfits === before) {
        keyed.keep(tag, key, bytes, at, out.buf, from, out.pos)
      }
    }
    held.length = 0
    let size = head.length + tail.length + 2
    for (const at of starts) size += int32At(bytes, at)
    // JSON is usually longer than BSON (an ObjectId is 12 bytes, then 26 characters).
    const out = new Out(Math.ceil(size * 1.6) + 64)
    out.utf8(head)
    out.byte(0x5b)
    for (let d = 0; d < starts.length; d++) {
      const at = starts[d] as number
      if (d > 0) out.byte(COMMA)
      if (bounds === undefined) {
        write(out, at)
        continue
      }
      bounds.push(out.pos)
      write(out, at)
      bounds.push(out.pos)
    }
    out.byte(0x5d)
    out.utf8(tail)
    return out.buf.subarray(0, out.pos)
  }
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
      out.utf8(JSON.stringify(exactCustom(decodeRaw(doc))))
    }
  }
  out.byte(0x5d)
  out.utf8(tail)
  return out.buf.subarray(0, out.pos)
}
