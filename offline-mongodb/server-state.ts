// What every command of one connection can reach: the server's storage, cursors and oplog, and
// the connection's own state.
import type { AwaitClock } from './await-clock.js'
import type { Cursors } from './cursors.js'
import type { ConnectionHazards, Hazards } from './hazards.js'
import type { Oplog } from './oplog.js'
import type { SessionWrites } from './retryable-writes.js'
import type { Storage } from './storage.js'

/** The one member of the replica set the stand-in presents itself as. */
export interface ReplicaSetMember {
  setName: string
  /** `host:port`, as the server listens. */
  me: string
}

/** serverStatus's `opcounters` (manual: serverStatus, "opcounters"). */
export interface OpCounters {
  insert: number, query: number, update: number, delete: number, getmore: number, command: number
}

export interface ServerState {
  storage: Storage
  cursors: Cursors
  /** Every write of the server, for change streams. */
  oplog: Oplog
  /** Fail points switched on by `configureFailPoint`, as mongod's test commands do. */
  failPoints: Set<string>
  connectionId: number
  member: ReplicaSetMember
  /** Aborted when this connection or the server closes: a waiting command ends then. */
  signal: AbortSignal
  /** Keeps the wait of an awaitData getMore (maxTimeMS). */
  clock: AwaitClock
  /** For retryable writes: the outcome of each session's latest write. */
  sessionWrites: SessionWrites
  /** The server's counts of operations by type, as serverStatus reports them (its `opcounters`). */
  opcounters: OpCounters
  /** What MongoDB may do and the stand-in does only when asked (hazards.ts): the server's. */
  hazards?: Hazards
  /** And this connection's dice. */
  connectionHazards?: ConnectionHazards
}
