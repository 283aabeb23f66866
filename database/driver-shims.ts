// The reach into a dependency's internals for speed that SHIMS can switch off (docs/architecture.md,
// "Reaching into dependencies", lists every reach), and the guards around it:
// `slot-sessions`, the MongoDB driver's Set of sessions in use (`client.s.activeSessions`,
// private) becomes a SlotSet (slot-set.ts), which keeps the young generation's garbage young.
//
// The shim assumes what the driver does with its Set, checked by tests against the driver
// version in the lock file (test/plugins/mongodb-sessions.test.ts). At start the installed
// driver's version is compared with the one those tests last passed on: another major or minor
// version turns it off, with one warning, until the tests are run on it and VERIFIED_DRIVER is
// moved. SHIMS=none turns it off by hand.
import { createRequire } from 'node:module'
import { SHIMS } from '../schemas/config.js'

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

/** The shims SHIMS asks for (`all`, `none`, or names); names it does not know are not asked for. */
export function askedShims (setting: string): Shim[] {
  if (setting === 'all') return [...SHIMS]
  return setting.split(',').map((name) => name.trim())
    .filter((name): name is Shim => (SHIMS as readonly string[]).includes(name))
}

/** The driver shims to use, from SHIMS and the installed driver. */
export function chooseShims (setting: string, version = driverVersion()): ShimChoice {
  const asked = askedShims(setting)
  if (asked.length === 0) return { on: new Set() }
  const [major, minor] = version.split('.')
  if (`${major}.${minor}` !== VERIFIED_DRIVER) {
    return {
      on: new Set(),
      warning: `MongoDB driver ${version} is not the version the driver shims were checked with ` +
        `(${VERIFIED_DRIVER}.x): ${asked.join(' and ')} off, the driver's own Set in use`
    }
  }
  return { on: new Set(asked) }
}
