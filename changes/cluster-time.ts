// The cluster time a resume token stands at. MongoDB's tokens (4.2 and later, `{ _data: <hex> }`)
// are KeyString-encoded with the cluster time first: the type byte 0x82 (KeyString's
// kTimestamp, 130) then the Timestamp's eight bytes, seconds then increment, big-endian
// (server src/mongo/db/pipeline/resume_token.cpp, ResumeToken::toDocument; the same layout
// that MongoDB's own tools decode). The stand-in's tokens follow it (offline-mongodb/resume-token.ts).
import { Timestamp, type Document } from 'mongodb'

const PREFIX = /^82([0-9a-fA-F]{16})/

/** Whether every event's token so far held its event's own clusterTime where this layout says. */
let layoutHolds = true

/** The time where the layout puts it, whether or not the layout still holds. */
function timeInToken (token: Document | undefined): bigint | undefined {
  const data: unknown = token?._data
  if (typeof data !== 'string') return undefined
  const match = PREFIX.exec(data)
  return match === null ? undefined : BigInt(`0x${match[1] as string}`)
}

/**
 * The cluster time of `token` as one number (seconds × 2³² + increment), or undefined for a token
 * of another shape, and for every token once an event's token disagreed with its clusterTime.
 */
export function clusterTimeOf (token: Document | undefined): bigint | undefined {
  return layoutHolds ? timeInToken(token) : undefined
}

/** Trusts the layout again: for a test that broke it, in a process whose other tests read times. */
export function trustTokenLayout (): void {
  layoutHolds = true
}

/**
 * Checks the layout against a change event's own `clusterTime` (public): from the first event
 * whose token holds another time, no token gives a time, as one of another shape. True for that
 * first event only, so that it is said once.
 */
export function tokenLayoutBroken (token: Document | undefined, clusterTime: unknown): boolean {
  if (!layoutHolds || !(clusterTime instanceof Timestamp)) return false
  const time = timeInToken(token)
  if (time === undefined || time === fromTimestamp(clusterTime)) return false
  layoutHolds = false
  return true
}

/** The same time as a BSON Timestamp (what `afterClusterTime` takes). */
export function toTimestamp (time: bigint): Timestamp {
  return new Timestamp({ t: Number(time >> 32n), i: Number(time & 0xFFFFFFFFn) })
}

/** A BSON Timestamp (an event's clusterTime, a reply's operationTime) as one number. */
export function fromTimestamp (timestamp: Timestamp): bigint {
  return (BigInt(timestamp.t) << 32n) | BigInt(timestamp.i)
}
