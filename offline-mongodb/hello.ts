import { ObjectId } from 'bson'
import type { ReplicaSetMember } from './server-state.js'
import type { Doc } from './storage.js'

const MAX_WIRE_VERSION = 21
/** mongod's electionId of a first term (an ObjectId holding the term). */
const ELECTION_ID = new ObjectId('7fffffff0000000000000001')

/**
 * The handshake reply: of the primary of a one-member replica set when `member` is given (so
 * that drivers open change streams and gossip cluster times as with a real one), else of a
 * standalone (the benchmark's replay database).
 */
export function helloReply (connectionId: number, member?: ReplicaSetMember): Doc {
  const replicaSet = member === undefined
    ? {}
    : {
        setName: member.setName,
        setVersion: 1,
        hosts: [member.me],
        primary: member.me,
        me: member.me,
        secondary: false,
        electionId: ELECTION_ID
      }
  return {
    helloOk: true,
    ismaster: true,
    isWritablePrimary: true,
    ...replicaSet,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1
  }
}
