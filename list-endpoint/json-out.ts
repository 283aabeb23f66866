// The JSON is written as bytes into one growing buffer (Out): text copied from the BSON as it
// is, no intermediate strings for the common values, nothing to encode again when it is sent.
import { isUtf8 } from 'node:buffer'
import { int32At, utf8 } from './bson-elements.js'

export const QUOTE = 0x22
export const COMMA = 0x2c
export const DIGIT = 0x30
const HEX = Buffer.from(Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).join(''), 'latin1')

// Characters JSON.stringify leaves as they are: printable ASCII but `"` and `\`.
const PLAIN = new Uint8Array(256)
for (let c = 0x20; c < 0x7f; c++) PLAIN[c] = c === 0x22 || c === 0x5c ? 0 : 1

export class Out {
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
    this.pos += this.buf.write(text, this.pos, 'latin1')
  }

  utf8 (text: string): void {
    this.room(text.length * 3)
    this.pos += this.buf.write(text, this.pos, 'utf8')
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
export function putText (out: Out, buf: Buffer, start: number, end: number, lenient: boolean): boolean {
  // Copied while checked: most text is plain, and then this one pass is all. Bytes from 0x80 up
  // are copied too: in valid UTF-8 they encode characters JSON.stringify leaves as they are
  // (UTF-8 has no lone surrogates), so only their validity is left to check, once, at the end.
  out.room(end - start + 2)
  const o = out.buf
  let p = out.pos
  o[p++] = QUOTE
  let high = false
  let i = start
  for (; i < end; i++) {
    const c = buf[i] as number
    if (PLAIN[c] !== 1) {
      if (c < 0x80) break
      high = true
    }
    o[p++] = c
  }
  if (i === end && (!high || isUtf8(buf.subarray(start, end)))) {
    o[p++] = QUOTE
    out.pos = p
    return true
  }
  if (!lenient && !isUtf8(buf.subarray(start, end))) return false
  out.utf8(JSON.stringify(utf8(buf, start, end)))
  return true
}

/** A BSON string (its value starting at `at`: int32 size, bytes, NUL) as a JSON string. */
export function putString (out: Out, buf: Buffer, at: number): boolean {
  return putText(out, buf, at + 4, at + 3 + int32At(buf, at), false)
}

export function putObjectId (out: Out, buf: Buffer, at: number): void {
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

/** An Int32's digits, without a string in between. */
export function putInt (out: Out, n: number): void {
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
