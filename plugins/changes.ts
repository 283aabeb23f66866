import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { availabilityCheck } from '../changes/availability.js'
import { ChangeHub } from '../changes/change-hub.js'
import { CollectionIdentities } from '../changes/collection-identity.js'
import { ProblemError } from '../schemas/problem.js'
import type { SharedBudget } from './mongodb.js'
import { atMost } from '../lib/pause.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The change feeds' shared streams, their waiting requests and their figures (docs/changes.md). */
    changes: ChangeFeeds
  }
}

/** How many recent changes each collection's stream keeps for the feeds to read from. */
export const RECENT_CHANGES = 10_000
/**
 * How long a verdict that the database can give a collection's feed is kept. One that it cannot
 * is not kept: the next feed request asks again (two small commands), so that a collection
 * created or given its images afterwards is followed at once.
 */
const AVAILABLE_TTL_MS = 60_000

/** How long the shared streams have to close at shutdown: a getMore under way ends within the hub's 1 s await, on a database that answers. */
const HUB_STOP_MS = 1500

/** The feeds' figures, read by the metrics; only this plugin writes them. */
export interface FeedStats {
  /** Events sent, by collection. */
  readonly eventsSent: ReadonlyMap<string, number>
  /** Requests waiting for a change now (admitted with wait), streams open now. */
  readonly waiting: number
  readonly streams: number
  /** Of those, the ones asleep between reads now, until a change, their deadline or a checkpoint. */
  readonly idle: number
  /** Events of types the feed does not know, passed over, by collection. */
  readonly eventsSkipped: ReadonlyMap<string, number>
  /** Changes that could never be read (the stream moved past them), by collection. */
  readonly unreadable: ReadonlyMap<string, number>
}

export interface ChangeFeeds {
  /** Names a collection that has a feed: start-up checks it. */
  declare: (collection: string, scoped: boolean) => void
  /** The shared stream of a collection (opened at the first feed that needs it). */
  hub: (collection: string, scoped: boolean) => ChangeHub
  /** Takes one of CHANGES_MAX_WAITING places for a waiting request or a stream; 503 OVERLOADED when none is free. Returns the function that gives it back. */
  admit: (kind: 'wait' | 'stream') => () => void
  /** The identity of a collection's history (its UUID), which feed tokens carry. */
  identities: CollectionIdentities
  /** Why the database cannot give a collection's feed, or undefined when it can; a check is made within `budget` (the request's). */
  unavailable: (collection: string, scoped: boolean, budget?: SharedBudget) => Promise<string | undefined>
  /** Whether the service is stopping: waits and streams end. */
  readonly stopping: boolean
  /** Calls `listener` once when the service stops; returns the function that cancels it. */
  onStop: (listener: () => void) => () => void
  /** Counts the events of an answer of `collection`'s feed, which their changes were committed at (ms since the epoch). */
  delivered: (collection: string, events: number, committedAt: readonly number[]) => void
  /** Calls `listener` with each delay from a change's commit to its delivery, in seconds; returns the function that stops it. */
  onLag: (listener: (seconds: number) => void) => () => void
  readonly stats: FeedStats
}

async function changesPlugin (fastify: FastifyInstance) {
  const { CHANGES_MAX_WAITING } = fastify.config
  const hubs = new Map<string, ChangeHub>()
  const verdicts = new Map<string, { reason: string | undefined, until: number, pending?: Promise<string | undefined> }>()
  const logged = new Set<string>()
  const stopListeners = new Set<() => void>()
  let stopping = false
  let admitted = 0
  const lagListeners = new Set<(seconds: number) => void>()
  const stats = {
    eventsSent: new Map<string, number>(),
    eventsSkipped: new Map<string, number>(),
    unreadable: new Map<string, number>(),
    waiting: 0,
    streams: 0,
    get idle () {
      let asleep = 0
      for (const hub of hubs.values()) asleep += hub.waiting
      return asleep
    }
  }
  const identities = new CollectionIdentities(fastify.database, fastify.config.QUERY_TIMEOUT_MS)
  const count = (map: Map<string, number>, collection: string, by = 1): void => { map.set(collection, (map.get(collection) ?? 0) + by) }

  const check = availabilityCheck(fastify.database, fastify.config.QUERY_TIMEOUT_MS, AVAILABLE_TTL_MS)

  const declared = new Map<string, boolean>()
  const feeds: ChangeFeeds = {
    declare: (collection, scoped) => { declared.set(collection, scoped) },
    hub: (collection, scoped) => {
      let hub = hubs.get(collection)
      if (hub === undefined) {
        hub = new ChangeHub({
          collection: () => fastify.database.collection(collection),
          client: () => fastify.database.db().client,
          maxTimeMS: fastify.config.QUERY_TIMEOUT_MS,
          scoped,
          capacity: RECENT_CHANGES,
          log: fastify.log,
          onSkipped: (type) => {
            count(stats.eventsSkipped, collection)
            fastify.log.debug({ collection, operationType: type }, 'a change event of a type the feed does not know was passed over')
          },
          onUnreadable: () => { count(stats.unreadable, collection) },
          onReset: () => { identities.forget(collection) }
        })
        hubs.set(collection, hub)
      }
      return hub
    },
    admit: (kind) => {
      if (stopping) throw new ProblemError(503, 'OVERLOADED', 'The service is shutting down; retry, another replica will answer.', [], { 'retry-after': '1' })
      if (admitted >= CHANGES_MAX_WAITING) {
        throw new ProblemError(503, 'OVERLOADED', `${CHANGES_MAX_WAITING} change-feed requests already wait or stream on this replica (CHANGES_MAX_WAITING); retry shortly, or ask without wait.`, [], { 'retry-after': '1' })
      }
      admitted++
      const counted = kind === 'wait' ? 'waiting' : 'streams'
      stats[counted]++
      let given = false
      return () => {
        if (given) return
        given = true
        admitted--
        stats[counted]--
      }
    },
    identities,
    unavailable: async (collection, scoped, budget) => {
      const known = verdicts.get(collection)
      const now = Date.now()
      if (known !== undefined && (known.pending !== undefined || known.until > now)) return await (known.pending ?? known.reason)
      const pending = check(collection, scoped, budget)
      verdicts.set(collection, { reason: known?.reason, until: 0, pending })
      try {
        const reason = await pending
        verdicts.set(collection, { reason, until: reason === undefined ? now + AVAILABLE_TTL_MS : 0 })
        if (reason !== undefined && !logged.has(reason)) {
          logged.add(reason)
          fastify.log.warn(`change feeds of ${collection} answer 503 CHANGES_UNAVAILABLE: ${reason}; lists are unaffected`)
        }
        return reason
      } catch (error) {
        verdicts.delete(collection)
        throw error
      }
    },
    get stopping () { return stopping },
    onStop: (listener) => {
      if (stopping) {
        listener()
        return () => {}
      }
      stopListeners.add(listener)
      return () => { stopListeners.delete(listener) }
    },
    delivered: (collection, events, committedAt) => {
      if (events === 0) return
      count(stats.eventsSent, collection, events)
      if (lagListeners.size === 0) return
      const now = Date.now()
      for (const at of committedAt) for (const listener of lagListeners) listener(Math.max(0, now - at) / 1000)
    },
    onLag: (listener) => {
      lagListeners.add(listener)
      return () => { lagListeners.delete(listener) }
    },
    stats
  }
  fastify.decorate('changes', feeds)

  const stop = (): void => {
    if (stopping) return
    stopping = true
    for (const listener of [...stopListeners]) listener()
    stopListeners.clear()
    for (const hub of hubs.values()) hub.wakeAll()
  }
  fastify.lifecycle.onStop(stop)
  // Before the database closes (its onClose): the streams are closed while the client is open.
  // A stream whose database is gone (Ctrl-C stops the embedded one with the service) waits for a
  // server until serverSelectionTimeoutMS: it is given HUB_STOP_MS, then the client's forced close ends it.
  fastify.addHook('preClose', async () => {
    stop()
    await atMost(Promise.all([...hubs.values()].map(async (hub) => await hub.stop())), HUB_STOP_MS)
  })
  // Start-up says once whether feeds can be given (each collection is checked again at its first feed).
  fastify.addHook('onReady', (done) => {
    fastify.database.readiness.started().then(async () => {
      // One collection at a time: a command each, never a burst beside the pool's warm-up.
      let available = true
      for (const [collection, scoped] of declared) if (await feeds.unavailable(collection, scoped) !== undefined) available = false
      if (available) fastify.log.info('change feeds are available')
    }).catch(() => {
      // The database is not reachable yet: the first feed checks.
    })
    done()
  })
}

export default fp(changesPlugin, { name: 'changes', dependencies: ['config', 'errors', 'mongodb', 'lifecycle'] })
