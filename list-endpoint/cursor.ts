// Opaque, signed keyset cursors (docs/paging.md): base64url bytes holding a digest of the query
// they continue and the sort-key values of a page's last document, signed with HMAC-SHA256
// (hmac-sha256.ts) and checked with timingSafeEqual.
// Any of the configured keys verifies; the first signs (key rotation).
//
// Layout: a version byte (2), four 8-byte digests (SHA-256 prefixes of the binding's path,
// filter, sort and fields), then the values as one BSON document {"0": v0, "1": v1, …}, exactly
// as stored (an int64 stays one); then `.` and the HMAC of those bytes: short, as a cursor is
// written twice per page (body and Link). Version 1
// cursors (JSON and Extended JSON, signed as text) are still read: a walk started before an
// upgrade goes on after it.
import { createHash, timingSafeEqual } from 'node:crypto'
import { BSON, type CollationOptions } from 'mongodb'
import { collationKey } from '../database/collation.js'
import { RecentMap } from '../lib/recent-map.js'
import { HmacSha256 } from './hmac-sha256.js'

const VERSION = 2
const PARTS = ['path', 'filter', 'sort', 'fields'] as const
const DIGEST_BYTES = 8
const VALUES_AT = 1 + PARTS.length * DIGEST_BYTES
const TEXT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
/**
 * The longest cursor or token read: what a request head holds (Node's maxHeaderSize, 16 KiB).
 * A cursor carries the last document's sort values, so one the service writes is read back
 * whenever its URL can be sent at all.
 */
export const MAX_TEXT = 16 * 1024

/**
 * How a cursor's values are read, from the page and from the cursor: as stored, nothing promoted
 * to JavaScript numbers or RegExps.
 */
export const EXACT_VALUES = {
  promoteValues: false,
  promoteBuffers: false,
  bsonRegExp: true,
  validation: { utf8: true }
} as const

/**
 * What a cursor is bound to: the list's path (kind and project, and for /projects and its feed the
 * caller's projects: projectsSuffix()), filter, sort and fields.
 */
export type CursorBinding = Record<typeof PARTS[number], string>

const claimDigests = new WeakMap<ReadonlySet<string>, string>()
/**
 * What follows a binding's `path` where the list is the caller's projects (/projects and its feed
 * with AUTH_MODE=jwt): a walk or a copy begun under one projects claim is refused under another,
 * whose list differs. Nothing for '*' (every caller without access control): those bindings, and
 * the cursors and tokens already issued under them, stay as they were.
 */
export function projectsSuffix (readable: '*' | ReadonlySet<string>): string {
  if (readable === '*') return ''
  let suffix = claimDigests.get(readable)
  if (suffix === undefined) {
    const ids = [...readable].sort().join(',')
    suffix = ` projects ${createHash('sha256').update(ids).digest('base64url').slice(0, 16)}`
    claimDigests.set(readable, suffix)
  }
  return suffix
}

/** What follows a binding's `sort` under a collation: a place decided in one collation is refused in another. */
export function collationSuffix (collation: CollationOptions | undefined): string {
  return collation === undefined ? '' : ` collation ${collationKey(collation)}`
}

/**
 * A binding's `fields`: the same fields asked for in any order bind alike, with `_id` named or
 * not (it is always there).
 */
export function fieldsKey (fields: readonly string[] | undefined): string {
  return fields === undefined ? '*' : fields.filter((field) => field !== '_id').sort().join(',')
}

export type CursorReading =
  | { ok: true, values: unknown[] }
  | { ok: false, code: 'INVALID_CURSOR' | 'CURSOR_MISMATCH', message: string }

// A page's binding texts repeat from request to request (the compiled query's filter, its
// sort, the path): their digests are kept rather than hashed for every cursor.
const digests = new RecentMap<Buffer>(1000)
function digest (text: string): Buffer {
  let known = digests.get(text)
  if (known === undefined) {
    known = createHash('sha256').update(text).digest().subarray(0, DIGEST_BYTES)
    digests.set(text, known)
  }
  return known
}
/** Whether `signature` is the HMAC-SHA256 of `message` under `key`, compared in constant time. */
function signedWith (key: HmacSha256, message: Uint8Array, signature: Buffer): boolean {
  const expected = key.sign(message)
  return expected.length === signature.length && timingSafeEqual(expected, signature)
}

const invalid = (message: string): CursorReading => ({ ok: false, code: 'INVALID_CURSOR', message })
/**
 * A feed's token (`since`) that cannot be read leaves its client one way on: the listing again
 * (docs/changes.md), which the message says, as the 410 of a lost history does.
 */
const FEED_ADVICE = ': start again without since, and replace the copy with what the feed lists'
const what = (param: string): string => param === 'since' ? 'token' : 'cursor'
const advice = (param: string): string => param === 'since' ? FEED_ADVICE : ''
const unreadable = (param: string): CursorReading =>
  invalid(`${param} is not a readable ${what(param)}${advice(param)}`)
const altered = (param: string): CursorReading => invalid(param === 'since'
  ? 'since is not a token of this service, or it was altered, or it was signed with another key ' +
    `(after a restart without CURSOR_SECRET, or by a replica with another one)${FEED_ADVICE}`
  : `${param} is not a cursor of this service, or it was altered`)

/** The sort's digest also holds the collation it runs in (list-handler.ts): the message names both. */
const PART_WORDS: Record<string, string> = { sort: 'sort (or the collation it ran in)' }

function mismatch (changed: string[], param: string): CursorReading {
  const words = changed.map((part) => PART_WORDS[part] ?? part)
  // The path's digest also holds the caller's projects where the list is them (projectsSuffix()):
  // those are not the client's to keep as they were, and it starts again.
  const restart = param === 'since' ? FEED_ADVICE : ': start again from the first page'
  const again = changed.includes('path') ? `; if the projects your token may read changed${restart}` : ''
  return {
    ok: false,
    code: 'CURSOR_MISMATCH',
    message: `This cursor continues another query: its ${words.join(', ')} ` +
      `${changed.length === 1 && changed[0] !== 'fields' ? 'differs' : 'differ'} from this request's; ` +
      `keep them as on the first page (only limit and count may change)${again}`
  }
}

/** Sort-key values as the BSON document `{"0": v0, "1": v1, …}` a cursor holds (a missing one null). */
export function valuesDocument (values: unknown[]): Uint8Array {
  const keyed: Record<string, unknown> = {}
  for (let i = 0; i < values.length; i++) keyed[i] = values[i] ?? null
  return BSON.serialize(keyed)
}

export class CursorCodec {
  private readonly keys: HmacSha256[]

  constructor (keys: Buffer[]) {
    if (keys.length === 0) throw new Error('a cursor codec needs at least one key')
    this.keys = keys.map((key) => new HmacSha256(key))
  }

  /** A cursor continuing after a document whose sort keys hold `values` (missing ones undefined). */
  encode (binding: CursorBinding, values: unknown[]): string {
    return this.encodeBson(this.head(binding), valuesDocument(values))
  }

  /** The same, from the head of `binding` (head()) and the values' BSON document (valuesDocument()). */
  encodeBson (head: Buffer, bson: Uint8Array): string {
    const payload = Buffer.allocUnsafe(VALUES_AT + bson.length)
    payload.set(head, 0)
    payload.set(bson, VALUES_AT)
    return `${payload.toString('base64url')}.${(this.keys[0] as HmacSha256).signBase64url(payload)}`
  }

  /**
   * What every cursor bound to `binding` starts with (the version and the binding's digests):
   * a list keeps it with a compiled query rather than hashing the binding for every page.
   */
  head (binding: CursorBinding): Buffer {
    const head = Buffer.alloc(VALUES_AT)
    head[0] = VERSION
    for (let i = 0; i < PARTS.length; i++) {
      digest(binding[PARTS[i] as typeof PARTS[number]]).copy(head, 1 + i * DIGEST_BYTES)
    }
    return head
  }

  /** The sort-key values of a cursor, if it is ours, intact, and made for this very query. */
  decode (text: string, binding: CursorBinding, param = 'after'): CursorReading {
    const dot = text.lastIndexOf('.')
    if (dot <= 0 || text.length > MAX_TEXT || !TEXT.test(text)) {
      return invalid(param === 'since'
        ? 'since is not a token of this service: pass the next of a previous answer unchanged, or ' +
          FEED_ADVICE.slice(2)
        : `${param} is not a cursor of this service: pass the next value of a previous page unchanged`)
    }
    const text64 = text.slice(0, dot)
    const payload = Buffer.from(text64, 'base64url')
    // Version 1 was JSON (its first byte `{`), signed as base64url text.
    const version1 = payload[0] === 0x7b
    const signature = Buffer.from(text.slice(dot + 1), 'base64url')
    // base64url's last character may carry unused bits: only the one text of the bytes is ours.
    if (payload.toString('base64url') !== text64 || signature.toString('base64url') !== text.slice(dot + 1)) {
      return altered(param)
    }
    // Version 1 signed the base64url text (ASCII), not the bytes.
    const signedBytes = version1 ? Buffer.from(text64, 'latin1') : payload
    const signed = this.keys.some((key) => signedWith(key, signedBytes, signature))
    if (!signed) return altered(param)
    if (version1) return readVersion1(payload, binding)
    if (payload[0] !== VERSION || payload.length < VALUES_AT + 5) {
      return invalid(`${param} is a ${what(param)} of another version of this service${advice(param)}`)
    }
    const changed = PARTS.filter((part, i) =>
      !digest(binding[part]).equals(payload.subarray(1 + i * DIGEST_BYTES, 1 + (i + 1) * DIGEST_BYTES)))
    if (changed.length > 0) return mismatch(changed, param)
    try {
      const keyed = BSON.deserialize(payload.subarray(VALUES_AT), EXACT_VALUES)
      const values = Object.values(keyed)
      return Object.keys(keyed).every((key, i) => key === String(i)) ? { ok: true, values } : unreadable(param)
    } catch {
      return unreadable(param)
    }
  }
}

/** A version 1 cursor: `{"v":1,"b":[four 16-character digests],"k":[canonical Extended JSON values]}`. */
function readVersion1 (payload: Buffer, binding: CursorBinding): CursorReading {
  let content: { v?: unknown, b?: unknown, k?: unknown }
  try {
    content = JSON.parse(payload.toString('utf8'))
  } catch {
    return unreadable('after')
  }
  if (content.v !== 1 || !Array.isArray(content.b) || !Array.isArray(content.k)) {
    return invalid('after is a cursor of another version of this service')
  }
  const given = content.b as unknown[]
  const changed = PARTS.filter((part, i) =>
    given[i] !== createHash('sha256').update(binding[part]).digest('base64url').slice(0, 16))
  if (changed.length > 0) return mismatch(changed, 'after')
  try {
    return { ok: true, values: BSON.EJSON.deserialize(content.k as unknown[], { relaxed: false }) as unknown[] }
  } catch {
    return unreadable('after')
  }
}
