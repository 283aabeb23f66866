// BSON values as JSON: a scalar (or array of scalars) of a declared field kind, which fits
// the kind or is left out; and any value (customFields), as JSON.stringify writes what the
// driver would decode it to.
import { BSON } from 'mongodb'
import type { FieldKind } from '../schemas/fields.js'
import { DECODE_OPTIONS, Elements, T, int32At, int64Value, isDBRefLike, reusableWalk } from './bson-elements.js'
import { putDate } from './json-date.js'
import { COMMA, putInt, putObjectId, putString, putText, type Out } from './json-out.js'
import { exactCustom } from './off-schema.js'

/** A scalar of a declared field as JSON; false (nothing written) when its type does not fit the field. */
export function putScalar (out: Out, kind: FieldKind, buf: Buffer, type: number, at: number): boolean {
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
        putInt(out, int32At(buf, at))
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

// One walk for every call: putScalar walks nothing.
const scalarWalk = reusableWalk()

/** A BSON array of one scalar kind as JSON; false (nothing written) when any element does not fit. */
export function putScalarArray (out: Out, kind: FieldKind, buf: Buffer, at: number): boolean {
  const mark = out.pos
  out.byte(0x5b)
  let first = true
  for (const e = scalarWalk.reset(buf, at); e.next();) {
    if (!first) out.byte(COMMA)
    first = false
    if (!putScalar(out, kind, buf, e.type, e.valueAt)) {
      out.pos = mark
      return false
    }
  }
  out.byte(0x5d)
  return true
}

/**
 * Any BSON value as JSON.stringify writes its decoded form, for the common types; false for the
 * others, with part of the value possibly written (putCustom rolls back).
 */
function putAny (out: Out, buf: Buffer, type: number, at: number): boolean {
  switch (type) {
    case T.Double: {
      const n = buf.readDoubleLE(at)
      // NaN and the infinities have no JSON number: Extended JSON's form (exactCustom).
      out.ascii(Number.isFinite(n) ? String(n) : `{"$numberDouble":"${String(n)}"}`)
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
    case T.Boolean: case T.Int32: return putScalar(out, type === T.Boolean ? 'boolean' : 'number', buf, type, at)
    // Beyond ±2^53 a JSON number would not hold it exactly: Extended JSON's form (exactCustom).
    case T.Int64:
      out.ascii(int64Value(buf, at) ?? `{"$numberLong":"${buf.readBigInt64LE(at)}"}`)
      return true
    case T.Document: return putAnyDocument(out, buf, at)
    case T.Array: {
      out.byte(0x5b)
      for (const e = new Elements(buf, at); e.next();) {
        if (e.nameAt > at + 5) out.byte(COMMA)
        if (!putAny(out, buf, e.type, e.valueAt)) return false
      }
      out.byte(0x5d)
      return true
    }
    default: return false
  }
}

/** A plain document as JSON.stringify writes it decoded; false for one that decodes to a DBRef. */
export function putAnyDocument (out: Out, buf: Buffer, at: number): boolean {
  out.byte(0x7b)
  let dollar = false
  for (const e = new Elements(buf, at); e.next();) {
    if (e.nameAt > at + 5) out.byte(COMMA)
    if (buf[e.nameAt] === 0x24) dollar = true
    // (A repeated name is written twice; JSON.parse then keeps, as the decoder does, the last value in
    // the first place.)
    putText(out, buf, e.nameAt, e.nameEnd, true)
    out.byte(0x3a)
    if (!putAny(out, buf, e.type, e.valueAt)) return false
  }
  out.byte(0x7d)
  // Only a `$` name (`$ref`, `$id`) can make it a DBRef.
  return !dollar || !isDBRefLike(buf, at)
}

/**
 * `customFields`: a plain document, written as JSON.stringify writes its decoded form; false
 * (nothing written) otherwise.
 */
export function putCustom (out: Out, buf: Buffer, type: number, at: number): boolean {
  if (type !== T.Document) return false
  const mark = out.pos
  if (putAnyDocument(out, buf, at)) return true
  out.pos = mark
  // customFields that decode to a DBRef are no document.
  if (isDBRefLike(buf, at)) return false
  // The rare types: decode this one value as the driver would, and write it as the serializer does.
  try {
    out.utf8(JSON.stringify(exactCustom(
      BSON.deserialize(buf.subarray(at, at + buf.readInt32LE(at)), DECODE_OPTIONS)
    )))
    return true
  } catch {
    return false
  }
}
