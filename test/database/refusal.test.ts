// Whether the database refuses connections, read from the driver's view of its servers (no
// database: descriptions as the driver's monitors leave them after a check).
import { MongoNetworkError, MongoNetworkTimeoutError } from 'mongodb'
import t from 'tap'
import { everyMemberRefuses, refusedBy } from '../../database/refusal.js'

/** A check's failure as the driver reports it: its network error, caused by the socket's. */
const socketError = (code: string): MongoNetworkError => new MongoNetworkError(`connect ${code} 127.0.0.1:27017`, {
  cause: Object.assign(new Error(`connect ${code}`), { code })
})
const unknown = (error: unknown) => ({ type: 'Unknown' as const, error: error as MongoNetworkError | null })
const topology = (
  ...servers: Array<{ type: 'Unknown' | 'RSSecondary' | 'RSPrimary', error: MongoNetworkError | null }>
) => ({ servers: new Map(servers.map((server, i) => [`10.0.0.${i}:27017`, server])) })

t.test('refused, reset as it opens, or no route: the connection was refused', async (t) => {
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']) {
    t.equal(refusedBy(socketError(code)), true, code)
  }
  t.equal(refusedBy(new MongoNetworkTimeoutError('connection timed out')), false, 'a timeout is a silent database')
  t.equal(refusedBy(null), false)
})

t.test('every member refused at its last check: the database refuses connections', async (t) => {
  t.equal(everyMemberRefuses(topology(unknown(socketError('ECONNREFUSED')))), true, 'one server')
  t.equal(everyMemberRefuses(topology(unknown(socketError('ECONNREFUSED')), unknown(socketError('EHOSTUNREACH')),
    unknown(socketError('ECONNRESET')))), true, 'three members')
})

t.test('a member that answers, or one not refusing, and it is not', async (t) => {
  t.equal(everyMemberRefuses(topology(unknown(socketError('ECONNREFUSED')), { type: 'RSSecondary', error: null },
    { type: 'RSSecondary', error: null })), false, 'an election: the primary is gone, the secondaries answer')
  t.equal(everyMemberRefuses(topology(unknown(socketError('ECONNREFUSED')),
    unknown(new MongoNetworkTimeoutError('connection timed out')))), false, 'a silent member')
  t.equal(everyMemberRefuses(topology(unknown(null))), false, 'not checked yet')
  t.equal(everyMemberRefuses(topology()), false, 'no server known')
  t.equal(everyMemberRefuses(undefined), false, 'no description yet')
})
