// The two places where the service reaches into the MongoDB driver's behaviour for speed
// (docs/architecture.md, "Reaching into dependencies"), and the guard around them.
//
// - `slot-sessions`: the driver's Set of sessions in use (`client.s.activeSessions`, private)
//   becomes a SlotSet (slot-set.ts), which keeps the young generation's garbage young.
// - `deadline-signal`: the `signal` option of every operation is a DeadlineSignal
//   (database/deadline.ts), an object with the AbortSignal members the driver reads, without
//   EventTarget's listener costs.
//
// Each assumes what the driver does with them, checked by tests against the driver version in
// the lock file (test/plugins/mongodb-sessions.test.ts, test/database/deadline.test.ts). At start
// the installed driver's version is compared with the one those tests last passed on: another
// major or minor version turns both off, with one warning, until the tests are run on it and
// VERIFIED_DRIVER is moved. DRIVER_SHIMS turns them off by hand (`none`), or keeps only some.
import { createRequire } from 'node:module'

export const SHIMS = ['slot-sessions', 'deadline-signal'] as const
export type Shim = typeof SHIMS[number]

/** The driver's major.minor version the shims' tests last passed on. */
export const VERIFIED_DRIVER = '7.8'

export interface ShimChoice {
  /** The shims in use. */
  on: ReadonlySet<Shim>
  /** Why some asked for are off, for one warning at start. */
  warning?: string
}

/** The installed driver's version (its package.json). */
export function driverVersion (): string {
  return (createRequire(import.meta.url)('mongodb/package.json') as { version: string }).version
}

/** The shims to use, from DRIVER_SHIMS (`all`, `none`, or names) and the installed driver. */
export function chooseShims (setting: string, version = driverVersion()): ShimChoice {
  const asked = setting === 'all' ? [...SHIMS] : setting === 'none' ? [] : setting.split(',').map((name) => name.trim()) as Shim[]
  if (asked.length === 0) return { on: new Set() }
  const [major, minor] = version.split('.')
  if (`${major}.${minor}` !== VERIFIED_DRIVER) {
    return { on: new Set(), warning: `MongoDB driver ${version} is not the version the driver shims were checked with (${VERIFIED_DRIVER}.x): ${asked.join(' and ')} off, the driver's own Set and AbortSignal in use` }
  }
  return { on: new Set(asked) }
}

/** What DRIVER_SHIMS takes: all, none, or shim names, comma-separated. */
export const SHIMS_PATTERN = `^(all|none|(${SHIMS.join('|')})(,(${SHIMS.join('|')}))*)$`
