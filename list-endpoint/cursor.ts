// Opaque, signed keyset cursors (docs/paging.md): base64url text holding the sort-key
// values of a page's last document and a digest of the query it continues, signed with
// HMAC-SHA256. Any of the configured keys verifies; the first signs (key rotation).
import { createHash, createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto'
import { BSON } from 'mongodb'
import { RecentMap } from '../recent-map.js'

const VERSION = 1
const PARTS = ['path', 'filter', 'sort', 'fields'] as const

/** What a cursor is bound to: the list's path (kind and project), filter, sort and fields. */
export type CursorBinding = Record<typeof PARTS[number], string>

export type CursorReading =
  | { ok: true, values: unknown[] }
  | { ok: false, code: 'INVALID_CURSOR' | 'CURSOR_MISMATCH', message: string }

// A page's binding texts repeat from request to request (the compiled query's filter, its
// sort, the path): their digests are kept rather than hashed for every cursor.
const digests = new RecentMap<string>(1000)
function digest (text: string): string {
  let known = digests.get(text)
  if (known === undefined) {
    known = createHash('sha256').update(text).digest('base64url').slice(0, 16)
    digests.set(text, known)
  }
  return known
}
const invalid = (message: string): CursorReading => ({ ok: false, code: 'INVALID_CURSOR', message })

export class CursorCodec {
  // Held as KeyObjects: given raw bytes, createHmac imports the key anew for every MAC, which
  // costs several times the MAC itself on a short cursor.
  private readonly keys: KeyObject[]

  constructor (keys: Buffer[]) {
    if (keys.length === 0) throw new Error('a cursor codec needs at least one key')
    this.keys = keys.map((key) => createSecretKey(key))
  }

  private mac (key: KeyObject, payload: string): Buffer {
    return createHmac('sha256', key).update(payload).digest()
  }

  /** A cursor continuing after a document whose sort keys hold `values`. */
  encode (binding: CursorBinding, values: unknown[]): string {
    const content = { v: VERSION, b: PARTS.map((part) => digest(binding[part])), k: BSON.EJSON.serialize(values, { relaxed: false }) }
    const payload = Buffer.from(JSON.stringify(content)).toString('base64url')
    return `${payload}.${this.mac(this.keys[0] as KeyObject, payload).toString('base64url')}`
  }

  /** The sort-key values of a cursor, if it is ours, intact, and made for this very query. */
  decode (text: string, binding: CursorBinding): CursorReading {
    const dot = text.lastIndexOf('.')
    if (dot <= 0 || text.length > 4096 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text)) return invalid('after is not a cursor of this service: pass the next value of a previous page unchanged')
    const payload = text.slice(0, dot)
    const signature = Buffer.from(text.slice(dot + 1), 'base64url')
    const signed = this.keys.some((key) => {
      const expected = this.mac(key, payload)
      return expected.length === signature.length && timingSafeEqual(expected, signature)
    })
    if (!signed) return invalid('after is not a cursor of this service, or it was altered')
    let content: { v?: unknown, b?: unknown, k?: unknown }
    try {
      content = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
    } catch {
      return invalid('after is not a readable cursor')
    }
    if (content.v !== VERSION || !Array.isArray(content.b) || !Array.isArray(content.k)) return invalid('after is a cursor of another version of this service')
    const digests = content.b as unknown[]
    const changed = PARTS.filter((part, i) => digests[i] !== digest(binding[part]))
    if (changed.length > 0) {
      return { ok: false, code: 'CURSOR_MISMATCH', message: `This cursor continues another query: its ${changed.join(', ')} ${changed.length === 1 ? 'differs' : 'differ'} from this request's; keep them as on the first page (only limit and count may change)` }
    }
    try {
      return { ok: true, values: BSON.EJSON.deserialize(content.k as unknown[], { relaxed: false }) as unknown[] }
    } catch {
      return invalid('after is not a readable cursor')
    }
  }
}
