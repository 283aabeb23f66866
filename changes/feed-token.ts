// A change feed's token (`next`, sent back as `since`): signed and bound like a list's cursor
// (list-endpoint/cursor.ts) to the path, the filter and the fields, with a sort of its own so that
// a list's cursor is never taken for a feed's token, then sealed (lib/text-seal.ts). It holds the phase, the point in
// the collection's changes (changes/change-hub.ts), the identity of the collection's history
// (changes/collection-identity.ts) and, while listing, the last `_id` listed.
import type { Document } from 'mongodb'
import { MAX_TEXT, type CursorBinding, type CursorCodec } from '../list-endpoint/cursor.js'
import { DIGEST } from '../list-endpoint/hmac-sha256.js'
import type { StreamPoint } from './recent-changes.js'
import type { TextSeal } from '../lib/text-seal.js'

/** The binding's sort part: a feed lists by `_id`, and its tokens are not a list's cursors. */
export const FEED_SORT = 'changes'

export type FeedPosition =
  /** Listing the matches by `_id`; the changes are followed from `start`, taken before the listing began. */
  | { phase: 'listing', start: StreamPoint, lastId?: unknown }
  | { phase: 'following', point: StreamPoint }

export type TokenReading =
  /** `identity`: the collection's UUID when the token was issued, null when unknown. */
  | { ok: true, position: FeedPosition, identity: string | null }
  | { ok: false, code: 'INVALID_CURSOR' | 'CURSOR_MISMATCH', message: string }

/**
 * The token of a position: values [phase, resume token, after, epoch, seq, last id, identity].
 * `after` is most often the resume token's own `_data` (an event's token): it is then written
 * as `true`, not twice, since an event's `_data` holds the document's key (a long shard key).
 */
export function encodeToken (
  codec: CursorCodec, seal: TextSeal, binding: CursorBinding, position: FeedPosition, identity: string | null
): string {
  const point = position.phase === 'listing' ? position.start : position.point
  return sealed(seal, codec.encode(binding, [
    position.phase === 'listing' ? 'l' : 'f',
    point.resumeToken,
    point.after === undefined ? null : point.after === point.resumeToken._data ? true : point.after,
    point.epoch ?? null,
    // As text: cursor values are read back exactly as stored, a number as a BSON wrapper.
    point.seq === undefined ? null : String(point.seq),
    position.phase === 'listing' ? position.lastId ?? null : null,
    identity
  ]))
}

// The signed token sealed whole (lib/text-seal.ts): its point moves with every project's writes,
// which a caller must not watch. The signature's 32 bytes follow the payload's.
const SEALED = 'listing-api feed token'
function sealed (seal: TextSeal, signed: string): string {
  const [payload = '', signature = ''] = signed.split('.')
  return seal.seal(Buffer.concat([Buffer.from(payload, 'base64url'), Buffer.from(signature, 'base64url')]), SEALED)
}

/** The signed token a sealed one holds; a token without a dot is sealed, one with a dot is of before. */
export function unsealed (seal: TextSeal, text: string): string {
  if (text.includes('.') || text.length > MAX_TEXT) return text
  const bytes = seal.open(text, SEALED)
  if (bytes === undefined || bytes.length <= DIGEST) return text
  const at = bytes.length - DIGEST
  return `${bytes.subarray(0, at).toString('base64url')}.${bytes.subarray(at).toString('base64url')}`
}

const isDocument = (value: unknown): value is Document =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** The position a token holds, if it is ours, intact, and made for this feed, filter and fields. */
export function decodeToken (codec: CursorCodec, seal: TextSeal, binding: CursorBinding, text: string): TokenReading {
  // One that cannot be opened is read as it is: codec.decode says it is no token of this service.
  const reading = codec.decode(unsealed(seal, text), binding, 'since')
  if (!reading.ok) {
    if (reading.code === 'CURSOR_MISMATCH' && reading.message.includes('sort')) {
      return {
        ok: false,
        code: 'INVALID_CURSOR',
        message: 'since is a list\'s cursor (its after), not a feed\'s token: ' +
          'pass the next of a previous answer of this feed, or start again without since, and replace the copy ' +
          'with what the feed lists'
      }
    }
    if (reading.code === 'CURSOR_MISMATCH') {
      return {
        ok: false,
        code: 'CURSOR_MISMATCH',
        message: reading.message.replace('This cursor continues another query', 'This token follows another feed')
          .replace('(only limit and count may change)', '(only limit and wait may change)')
      }
    }
    return reading
  }
  // Tokens of six values come from before identities were written: their identity is unknown.
  const [phase, resumeToken, after, epoch, seq, lastId, identity = null] =
    reading.values as [unknown, unknown, unknown, unknown, unknown, unknown, unknown]
  if ((phase !== 'l' && phase !== 'f') || !isDocument(resumeToken) ||
    (reading.values.length !== 6 && reading.values.length !== 7) ||
    (after !== null && after !== true && typeof after !== 'string') ||
    (after === true && typeof resumeToken._data !== 'string') ||
    (epoch !== null && typeof epoch !== 'string') ||
    (seq !== null && (typeof seq !== 'string' || !/^\d{1,15}$/.test(seq))) ||
    (identity !== null && typeof identity !== 'string')) {
    return { ok: false, code: 'INVALID_CURSOR', message: 'since is not a token of a change feed' }
  }
  const point: StreamPoint = { resumeToken }
  if (after !== null) point.after = after === true ? resumeToken._data as string : after
  if (epoch !== null && seq !== null) {
    point.epoch = epoch
    point.seq = Number(seq)
  }
  if (phase === 'f') return { ok: true, position: { phase: 'following', point }, identity }
  return {
    ok: true,
    position: lastId === null ? { phase: 'listing', start: point } : { phase: 'listing', start: point, lastId },
    identity
  }
}
