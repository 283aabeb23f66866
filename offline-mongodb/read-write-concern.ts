// Read and write concerns while the majority commit point lags the latest write (hazards), as a
// replica set member answers them (mongod: read_concern_mongod.cpp, waitForReadConcernImpl):
// a "majority" read sees the data as of the majority point, and its operationTime is that point
// (jstests/replsets/operation_time_read_and_write_concern.js); afterClusterTime waits for the
// point the level reads at, within maxTimeMS (50, jstests/replsets/non_transaction_snapshot_reads.js);
// a w: "majority" write is acknowledged once the majority point has passed it.
import { Timestamp } from 'bson'
import { isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import { count, type Request } from './request.js'
import type { Doc } from './storage.js'

/** The commands that read with a read concern (read-write-concern spec, "Read Concern"). */
const READS = new Set(['find', 'aggregate', 'count', 'distinct'])
/** Writes take a read concern with afterClusterTime only (read-write-concern spec, "afterClusterTime"). */
const WRITES = new Set([
  'insert', 'update', 'delete', 'findAndModify', 'findandmodify', 'create', 'createIndexes', 'drop', 'dropDatabase',
  'collMod'
])
const LEVELS = ['local', 'available', 'majority', 'linearizable', 'snapshot']

interface ReadConcern { majority: boolean, after?: bigint }

function readConcernOf (cmd: Doc): ReadConcern {
  const concern = cmd.readConcern
  if (concern === undefined) return { majority: false }
  if (!isDocument(concern)) {
    throw new CommandError(14, 'TypeMismatch', "BSON field 'readConcern' is the wrong type, expected type 'object'")
  }
  const level = concern.level ?? 'local'
  if (typeof level !== 'string' || !LEVELS.includes(level)) {
    throw new CommandError(
      2, 'BadValue', `Enumeration value '${String(level)}' for field 'readConcern.level' is not a valid value.`
    )
  }
  if (concern.atClusterTime !== undefined) {
    throw new CommandError(2, 'BadValue', 'the offline database does not support atClusterTime')
  }
  const after = concern.afterClusterTime
  if (after === undefined) return { majority: level === 'majority' || level === 'snapshot' }
  if (!(after instanceof Timestamp)) {
    throw new CommandError(
      14, 'TypeMismatch', "BSON field 'readConcern.afterClusterTime' is the wrong type, expected type 'timestamp'"
    )
  }
  if (level === 'linearizable') {
    throw new CommandError(72, 'InvalidOptions', 'afterClusterTime is not allowed with linearizable read concern')
  }
  // A snapshot read outside a transaction reads at the majority point too (waitForReadConcernImpl).
  return { majority: level === 'majority' || level === 'snapshot', after: after.toBigInt() }
}

/**
 * No write concern is the server's default, w: "majority" since MongoDB 5.0 (manual: "Default MongoDB Read
 * Concerns/Write Concerns").
 */
function awaitsMajority (writeConcern: unknown): { wtimeout: number } | undefined {
  if (writeConcern === undefined) return { wtimeout: 0 }
  if (!isDocument(writeConcern)) {
    throw new CommandError(14, 'TypeMismatch', "BSON field 'writeConcern' is the wrong type, expected type 'object'")
  }
  const { w } = writeConcern
  // w: 2 or more of the several members the lag stands for waits as long as the majority.
  const waits = w === undefined || w === 'majority' || (typeof w === 'number' && w >= 2)
  return waits ? { wtimeout: count(writeConcern.wtimeout, 'wtimeout', 0) } : undefined
}

const shutdown = (): CommandError =>
  new CommandError(91, 'ShutdownInProgress', 'the connection or the server is closing')

/** `value`, or what `next` makes of it once it settles. */
function then (value: Doc | Promise<Doc>, next: (reply: Doc) => Doc | Promise<Doc>): Doc | Promise<Doc> {
  return value instanceof Promise ? value.then(next) : next(value)
}

/** Runs a command under its read and write concerns; commands that take neither simply run. */
export function underConcerns (request: Request, name: string, run: () => Doc | Promise<Doc>): Doc | Promise<Doc> {
  const { cmd, state } = request
  const hazards = state.hazards
  const reads = READS.has(name)
  if (hazards === undefined || (!reads && !WRITES.has(name))) return run()
  const concern = readConcernOf(cmd)
  const majority = reads && concern.majority
  if (concern.after !== undefined && concern.after > state.oplog.lastAt) {
    // The stand-in's cluster time is its latest write: it does not take a later one from gossip.
    throw new CommandError(
      72, 'InvalidOptions',
      'readConcern afterClusterTime value must not be greater than the current clusterTime. ' +
        `Requested clusterTime: ${new Timestamp(concern.after).toString()}; ` +
        `current clusterTime: ${state.oplog.lastTime.toString()}`
    )
  }
  const read = (): Doc | Promise<Doc> => {
    if (majority) request.readAt = state.oplog.majorityAt
    const before = state.oplog.lastAt
    return then(run(), (reply) => {
      if (request.readAt !== undefined) reply.operationTime = new Timestamp(request.readAt)
      const wait = WRITES.has(name) && state.oplog.lastAt > before ? awaitsMajority(cmd.writeConcern) : undefined
      const at = state.oplog.lastAt
      return wait === undefined || state.oplog.majorityAt >= at
        ? reply
        : acknowledged(request, reply, at, wait.wtimeout)
    })
  }
  if (!majority || concern.after === undefined || state.oplog.majorityAt >= concern.after) return read()
  const maxTimeMS = count(cmd.maxTimeMS, 'maxTimeMS', 0)
  const deadline = maxTimeMS > 0 ? request.started + maxTimeMS : Infinity
  const after = concern.after
  return hazards.untilMajority(after, deadline, state.signal).then((reached) => {
    if (state.signal.aborted) throw shutdown()
    if (!reached) throw new CommandError(50, 'MaxTimeMSExpired', 'operation exceeded time limit')
    return read()
  })
}

/** The reply of a write once the majority point has passed it, or with a writeConcernError after wtimeout. */
async function acknowledged (request: Request, reply: Doc, at: bigint, wtimeout: number): Promise<Doc> {
  const { hazards, signal } = request.state
  if (hazards === undefined) return reply
  const reached = await hazards.untilMajority(at, wtimeout > 0 ? Date.now() + wtimeout : Infinity, signal)
  if (signal.aborted) throw shutdown()
  if (!reached) {
    reply.writeConcernError = {
      code: 64, codeName: 'WriteConcernFailed', errmsg: 'waiting for replication timed out', errInfo: { wtimeout: true }
    }
  }
  return reply
}
