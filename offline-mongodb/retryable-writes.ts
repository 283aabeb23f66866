// Retryable writes (manual: "Retryable Writes"): a replica set member remembers the outcome of
// each session's latest write (`lsid`, `txnNumber`), so that a write the driver sends again
// after losing its connection is answered, not applied twice.
import { Binary, Long } from 'bson'
import { isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import type { Doc } from './storage.js'

/** Sessions remembered at most; the oldest is forgotten first. */
const SESSIONS = 10_000

/** The latest write of each session, by session id. */
export type SessionWrites = Map<string, { txnNumber: bigint, reply: Doc }>

function sessionKey (lsid: unknown): string | undefined {
  if (!isDocument(lsid) || !(lsid.id instanceof Binary)) return undefined
  return Buffer.from(lsid.id.buffer).toString('hex')
}

/** What a write command's request holds (request.ts's `Request`, among others). */
interface WriteRequest { cmd: Doc, state: { sessionWrites: SessionWrites } }

/** Wraps a write command: the same `txnNumber` of a session again gets the first reply. */
export function retryable<R extends WriteRequest> (handler: (request: R) => Doc): (request: R) => Doc {
  return (request) => {
    const { cmd } = request
    const key = sessionKey(cmd.lsid)
    const txnNumber = cmd.txnNumber instanceof Long
      ? cmd.txnNumber.toBigInt()
      : typeof cmd.txnNumber === 'number' ? BigInt(cmd.txnNumber) : undefined
    if (key === undefined || txnNumber === undefined) return handler(request)
    const sessions = request.state.sessionWrites
    const last = sessions.get(key)
    if (last !== undefined && txnNumber < last.txnNumber) {
      throw new CommandError(225, 'TransactionTooOld', `Cannot start transaction ${txnNumber} on session ${key} ` +
        `because a newer transaction ${last.txnNumber} has already started`)
    }
    if (last?.txnNumber === txnNumber) return { ...last.reply }
    const reply = handler(request)
    sessions.delete(key)
    sessions.set(key, { txnNumber, reply: { ...reply } })
    if (sessions.size > SESSIONS) sessions.delete(sessions.keys().next().value as string)
    return reply
  }
}
