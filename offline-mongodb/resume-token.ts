// Resume tokens: `{ _data: <hex> }`, opaque to clients (change-streams spec, "Response Format"),
// that order as the events do. Like mongod's, the hex begins with 0x82 and the cluster time's
// eight bytes; then one byte says where in that write the stream stands:
//   00  a high-water mark: before every event of the write at this cluster time
//   01  after the write's event (for a drop, before the invalidate that follows it)
//   02  after the invalidate (mongod's `fromInvalidate` tokens)
import { isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import type { Doc } from './storage.js'

/** A place in the stream: the write at cluster time `at`, with its first `seen` events behind. */
export interface StreamPosition { at: bigint, seen: number }

export function tokenOf ({ at, seen }: StreamPosition): Doc {
  return { _data: `82${at.toString(16).toUpperCase().padStart(16, '0')}0${seen}` }
}

/** The high-water mark at `at`: a token that resumes with the write at that cluster time. */
export function highWaterMark (at: bigint): Doc {
  return tokenOf({ at, seen: 0 })
}

const TOKEN = /^82([0-9A-F]{16})0([012])$/

/** Reads a resume token, refusing as mongod does (manual: Change Streams, "Resume Tokens"). */
export function readToken (token: unknown, field: string): StreamPosition & { fromInvalidate: boolean } {
  if (!isDocument(token)) {
    throw new CommandError(14, 'TypeMismatch',
      `BSON field '$changeStream.${field}' is the wrong type, expected type 'object'`)
  }
  const data = token._data
  if (typeof data !== 'string') {
    throw new CommandError(40647, 'Location40647',
      'Bad resume token: _data of missing or of wrong type. Expected string')
  }
  if (data.length === 0) throw new CommandError(40649, 'Location40649', 'invalid empty resume token')
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(data)) {
    throw new CommandError(9, 'FailedToParse', 'resume token string was not a valid hex string')
  }
  const match = TOKEN.exec(data.toUpperCase())
  if (match === null) {
    throw new CommandError(9, 'FailedToParse',
      'resume token was not issued by this server (the offline database reads its own tokens only)')
  }
  const seen = Number(match[2])
  return { at: BigInt(`0x${match[1] as string}`), seen, fromInvalidate: seen === 2 }
}
