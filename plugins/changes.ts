import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { availabilityCheck } from '../changes/availability.js'
import { ChangeHub } from '../changes/change-hub.js'
import { CollectionIdentities } from '../changes/collection-identity.js'
import { ProblemError } from '../schemas/problem.js'
import type { ChangeFeeds } from '../changes/change-feeds.js'
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
