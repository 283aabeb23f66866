// How a feed reads documents: at `majority`, at or after the change it reports, through a
// causally consistent session whose operationTime the driver sends as `afterClusterTime`
// (causal-consistency spec, "Sending afterClusterTime"; manual: Read Concern "majority" and
// "Causal Consistency"). A majority read cannot see a write that a rollback later undoes (a
// rollback produces no change event), and `afterClusterTime` keeps a lagging node or a stale
// majority snapshot from answering a state older than the event: either would give a wrong
// `remove` or a stale `upsert` with the token already past the change.
import type { ClientSession, MongoClient, ReadPreferenceLike } from 'mongodb'
import { toTimestamp } from './cluster-time.js'

export interface FeedReadOptions {
  session: ClientSession
  readConcern: { level: 'majority' }
  readPreference: ReadPreferenceLike
}

/**
 * Runs `work` with the options of a read at or after `time` (a cluster time, from
 * cluster-time.ts). Without a time (a token of another shape), the read is still at majority.
 */
export async function readAtOrAfter<T> (
  client: MongoClient, time: bigint | undefined, readPreference: ReadPreferenceLike,
  work: (options: FeedReadOptions) => Promise<T>
): Promise<T> {
  const session = client.startSession({ causalConsistency: true })
  if (time !== undefined) session.advanceOperationTime(toTimestamp(time))
  try {
    return await work({ session, readConcern: { level: 'majority' }, readPreference })
  } finally {
    session.endSession().catch(() => {})
  }
}
