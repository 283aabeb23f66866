import { Timestamp } from 'bson'
import { CommandError } from './errors.js'
import type { Request } from './request.js'

/**
 * `{ offlineHazards: 'status' | 'advanceMajority' | 'holdMajority' | 'releaseMajority', to?: <Timestamp> }`
 * on admin: the controls above for a test that reaches the stand-in only through a driver. Not a
 * command of MongoDB's: without hazards it is unknown (59), as on mongod.
 */
export function hazardsCommand ({ cmd, db, state }: Request): Record<string, unknown> {
  const { hazards } = state
  if (hazards === undefined) throw new CommandError(59, 'CommandNotFound', "no such command: 'offlineHazards'")
  if (db !== 'admin') {
    throw new CommandError(13, 'Unauthorized', 'offlineHazards may only be run against the admin database.')
  }
  const { offlineHazards: action, to } = cmd
  if (to !== undefined && !(to instanceof Timestamp)) {
    throw new CommandError(
      14, 'TypeMismatch', "BSON field 'offlineHazards.to' is the wrong type, expected type 'timestamp'"
    )
  }
  if (action === 'advanceMajority') hazards.advanceMajority(to)
  else if (action === 'holdMajority') hazards.holdMajority()
  else if (action === 'releaseMajority') hazards.releaseMajority()
  else if (action !== 'status') {
    throw new CommandError(2, 'BadValue', `offlineHazards: unknown action ${JSON.stringify(action)}`)
  }
  return { majorityTime: hazards.majorityTime, latestTime: hazards.latestTime, waiting: hazards.waiting, ok: 1 }
}
