// Whether the database can give a collection's change feed: the deployment (a replica set or a
// sharded cluster, MongoDB 6.0 or later) and the collection (its pre- and post-images). Both
// checks run within a request's deadline, as every other command does (Database#bounded).
import type { Document } from 'mongodb'
import type { Database, SharedBudget } from '../database/database.js'
import { unavailableReason } from './change-events.js'

/** What the checks use of the service's database. */
export type CheckedDatabase = Pick<Database, 'db' | 'bounded' | 'timed'>

/**
 * The wire version of MongoDB 6.0, the first release with change stream pre- and post-images
 * (`fullDocument: "whenAvailable"`, `fullDocumentBeforeChange`). The specifications' table
 * (source/wireversion-featurelist) gives 13 for 5.0 up to 16 for 5.3, 17 for 6.0, 21 for 7.0
 * and 25 for 8.0; a mongos answers its own, which its shards match.
 */
export const FEEDS_WIRE_VERSION = 17

/**
 * The releases older than 6.0 that the driver still connects to (wire version 9 and later; 10 to
 * 12 were development releases).
 */
const OLDER_RELEASES: Record<number, string> = { 9: '4.4', 13: '5.0', 14: '5.1', 15: '5.2', 16: '5.3' }

/** Whether `hello` names a server older than 6.0 (then `buildInfo` is asked for its release, for the message). */
export function olderThanFeeds (hello: Document): boolean {
  return typeof hello.maxWireVersion === 'number' && hello.maxWireVersion < FEEDS_WIRE_VERSION
}

/**
 * Why the deployment cannot give feeds, or undefined when it can: a standalone server (`hello`
 * has neither a replica set's `setName` nor a mongos's `msg: "isdbgrid"`), or a release older
 * than 6.0, named by `version` (buildInfo's) or else by its wire version.
 */
export function deploymentReason (hello: Document, version?: string): string | undefined {
  if (typeof hello.setName !== 'string' && hello.msg !== 'isdbgrid') {
    return 'the database is a standalone server: change feeds need a replica set or a sharded cluster ' +
      '(MongoDB 6.0 or later)'
  }
  if (!olderThanFeeds(hello)) return undefined
  const wire = hello.maxWireVersion as number
  const known = OLDER_RELEASES[wire]
  const release = typeof version === 'string' && version !== ''
    ? `MongoDB ${version}`
    : known === undefined ? `a MongoDB release of wire version ${wire}` : `MongoDB ${known} (wire version ${wire})`
  return `the database runs ${release}: change feeds need MongoDB 6.0 or later, ` +
    'the first with change stream pre- and post-images'
}

/** Why the database cannot give a collection's feed, or undefined when it can. */
export interface AvailabilityCheck {
  (collection: string, scoped: boolean, budget?: SharedBudget): Promise<string | undefined>
  /**
   * Every collection of `collections` (name → scoped) at once, on a budget of its own: the
   * deployment's verdict, then one listCollections for them all.
   */
  all?: (collections: ReadonlyMap<string, boolean>) => Promise<Map<string, string | undefined>>
}

/** Why a collection cannot have a feed, from its listCollections entry (undefined: it does not exist). */
function collectionReason (collection: string, info: Document | undefined): string | undefined {
  if (info === undefined) {
    return `the collection ${collection} does not exist yet: create it with change stream pre- and post-images ` +
      `(db.createCollection("${collection}", { changeStreamPreAndPostImages: { enabled: true } }))`
  }
  const images = (info as { options?: { changeStreamPreAndPostImages?: { enabled?: unknown } } })
    .options?.changeStreamPreAndPostImages
  if (images?.enabled === true) return undefined
  return `the collection ${collection} does not record change stream pre- and post-images: enable them with ` +
    `db.runCommand({ collMod: "${collection}", changeStreamPreAndPostImages: { enabled: true } })`
}

/**
 * The check of a collection, bounded as a request's commands are. The deployment's verdict is
 * shared by every collection for `ttlMs`; `scoped` collections need their images, since a
 * project's deleted document is known to be the project's from its pre-image only. A refusal
 * that says what the deployment lacks (a user without the listCollections privilege) is a
 * verdict too; any other failure is thrown.
 */
export function availabilityCheck (
  database: CheckedDatabase, queryTimeoutMs: number, ttlMs: number
): AvailabilityCheck {
  let deployment: { reason: Promise<string | undefined>, at: number } | undefined
  // Within the deadline of the check that asked: the ones that join it share that deadline.
  const deploymentVerdict = (signal: AbortSignal): Promise<string | undefined> => {
    if (deployment === undefined || Date.now() - deployment.at > ttlMs) {
      // Db#command, which any database answers: Admin#command (mongodb 7.8.0, lib/admin.js) does
      // not pass `signal` on, and a hello whose reply never came held its request past the deadline.
      const db = database.db()
      const reason = database.timed('hello', () => db.command({ hello: 1 }, { signal })).then(async (hello) => {
        // The release's own name for the message; without it, its wire version names it.
        const build = olderThanFeeds(hello)
          ? await database.timed('buildInfo', () => db.command({ buildInfo: 1 }, { signal })).catch(() => undefined)
          : undefined
        return deploymentReason(hello, build?.version)
      })
      deployment = { reason, at: Date.now() }
      reason.catch(() => { deployment = undefined })
    }
    return deployment.reason
  }
  const checkMany = (
    collections: ReadonlyMap<string, boolean>, budget?: SharedBudget
  ): Promise<Map<string, string | undefined>> => database.bounded(async (signal) => {
    const unfit = await deploymentVerdict(signal)
    const names = [...collections.keys()]
    const scoped = names.filter((name) => collections.get(name) === true)
    if (unfit !== undefined || scoped.length === 0) return new Map(names.map((name) => [name, unfit]))
    const options = { maxTimeMS: queryTimeoutMs, signal }
    const filter = scoped.length === 1 ? { name: scoped[0] } : { name: { $in: scoped } }
    let infos: Document[]
    try {
      infos = await database.timed('listCollections', () => database.db().listCollections(filter, options).toArray())
    } catch (error) {
      // A refusal that says what is lacking (the listCollections privilege): the scoped ones' verdict.
      const reason = unavailableReason(error)
      if (reason === undefined) throw error
      return new Map(names.map((name) => [name, collections.get(name) === true ? reason : undefined]))
    }
    return new Map(names.map((name) => [name, collections.get(name) === true
      ? collectionReason(name, infos.find((info) => info.name === name))
      : undefined]))
  }, budget)
  // A refusal of hello, which says what the deployment lacks, is every collection's verdict.
  const verdicts = async (
    collections: ReadonlyMap<string, boolean>, budget?: SharedBudget
  ): Promise<Map<string, string | undefined>> => {
    try {
      return await checkMany(collections, budget)
    } catch (error) {
      const reason = unavailableReason(error)
      if (reason === undefined) throw error
      return new Map([...collections.keys()].map((name) => [name, reason]))
    }
  }
  return Object.assign(
    async (collection: string, scoped: boolean, budget?: SharedBudget) =>
      (await verdicts(new Map([[collection, scoped]]), budget)).get(collection),
    { all: async (collections: ReadonlyMap<string, boolean>) => await verdicts(collections) }
  )
}

/**
 * Why `check` says a collection's feed cannot be given, remembered: a verdict that it can for
 * `ttlMs`, one that it cannot not at all (the next request asks again, so that a collection
 * created or given its images afterwards is followed at once). Once a verdict that it can has
 * grown old, requests keep it while one check renews it beside them, on its own budget: on a
 * slow database its commands are round trips that their budget lacks. Checks of one collection
 * under way are shared; each reason is said once through `warn`.
 */
export function rememberedAvailability (
  check: AvailabilityCheck, ttlMs: number, warn: (message: string) => void, now: () => number = Date.now
): AvailabilityCheck {
  interface Verdict {
    reason: string | undefined
    until: number
    pending?: Promise<string | undefined>
    renewing?: true
  }
  const verdicts = new Map<string, Verdict>()
  const said = new Set<string>()
  const decided = (collection: string, reason: string | undefined, at: number): string | undefined => {
    verdicts.set(collection, { reason, until: reason === undefined ? at + ttlMs : 0 })
    if (reason !== undefined && !said.has(reason)) {
      said.add(reason)
      warn(`change feeds of ${collection} answer 503 CHANGES_UNAVAILABLE: ${reason}; lists are unaffected`)
    }
    return reason
  }
  const remembered: AvailabilityCheck = async (collection, scoped, budget) => {
    const known = verdicts.get(collection)
    const at = now()
    if (known?.pending !== undefined) return await known.pending
    if (known !== undefined && known.until > at) return known.reason
    if (known !== undefined && known.reason === undefined && known.until > 0) {
      if (known.renewing === undefined) {
        known.renewing = true
        // A renewal that fails leaves the verdict as it was: the next request tries again.
        check(collection, scoped).then((reason) => decided(collection, reason, now()), () => { delete known.renewing })
      }
      return undefined
    }
    return await settle(collection, check(collection, scoped, budget), at)
  }
  /** The verdict of a check under way, decided once it ends unless another has taken its place. */
  const settle = async (
    collection: string, pending: Promise<string | undefined>, at: number
  ): Promise<string | undefined> => {
    verdicts.set(collection, { reason: verdicts.get(collection)?.reason, until: 0, pending })
    const owns = (): boolean => verdicts.get(collection)?.pending === pending
    try {
      const reason = await pending
      return owns() ? decided(collection, reason, at) : reason
    } catch (error) {
      if (owns()) verdicts.delete(collection)
      throw error
    }
  }
  const all = check.all
  if (all === undefined) return remembered
  return Object.assign(remembered, {
    // The collections a request is checking already keep that check; the others are checked together.
    all: async (collections: ReadonlyMap<string, boolean>) => {
      const at = now()
      const asked = new Map([...collections].filter(([name]) => verdicts.get(name)?.pending === undefined))
      const checking = asked.size === 0 ? Promise.resolve(new Map<string, string | undefined>()) : all(asked)
      return new Map(await Promise.all([...collections.keys()].map(async (name) => {
        const reason = asked.has(name)
          ? settle(name, checking.then((reasons) => reasons.get(name)), at)
          : verdicts.get(name)?.pending
        return [name, await reason] as const
      })))
    }
  })
}
