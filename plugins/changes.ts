import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { availabilityCheck, rememberedAvailability } from '../changes/availability.js'
import { ChangeHub } from '../changes/change-hub.js'
import { CollectionIdentities } from '../changes/collection-identity.js'
import type { ChangeFeeds } from '../changes/change-feeds.js'
import { FeedFigures } from '../changes/feed-figures.js'
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

/**
 * How long the shared streams have to close at shutdown: a getMore under way ends within the
 * hub's 1 s await, on a database that answers.
 */
const HUB_STOP_MS = 1500

async function changesPlugin (fastify: FastifyInstance) {
  const hubs = new Map<string, ChangeHub>()
  const stopListeners = new Set<() => void>()
  let stopping = false
  const figures = new FeedFigures(fastify.config.CHANGES_MAX_WAITING, () => {
    let asleep = 0
    for (const hub of hubs.values()) asleep += hub.waiting
    return asleep
  }, () => stopping)
  const identities = new CollectionIdentities(fastify.database, fastify.config.QUERY_TIMEOUT_MS)
  const check = availabilityCheck(fastify.database, fastify.config.QUERY_TIMEOUT_MS, AVAILABLE_TTL_MS)
  const declared = new Map<string, boolean>()
  const unavailable = rememberedAvailability(check, AVAILABLE_TTL_MS, (message) => { fastify.log.warn(message) })
  const hubOf = (collection: string, scoped: boolean): ChangeHub => new ChangeHub({
    collection: () => fastify.database.collection(collection),
    client: () => fastify.database.db().client,
    maxTimeMS: fastify.config.QUERY_TIMEOUT_MS,
    scoped,
    capacity: RECENT_CHANGES,
    log: fastify.log,
    onSkipped: (type) => {
      figures.count(figures.eventsSkipped, collection)
      fastify.log.debug({ collection, operationType: type },
        'a change event of a type the feed does not know was passed over')
    },
    onUnreadable: () => { figures.count(figures.unreadable, collection) },
    onReset: () => { identities.forget(collection) }
  })
  const feeds: ChangeFeeds = {
    declare: (collection, scoped) => { declared.set(collection, scoped) },
    hub: (collection, scoped) => {
      let hub = hubs.get(collection)
      if (hub === undefined) hubs.set(collection, hub = hubOf(collection, scoped))
      return hub
    },
    admit: figures.admit,
    identities,
    unavailable,
    get stopping () { return stopping },
    onStop: (listener) => {
      if (stopping) {
        listener()
        return () => {}
      }
      stopListeners.add(listener)
      return () => { stopListeners.delete(listener) }
    },
    delivered: figures.delivered,
    onLag: figures.onLag,
    stats: figures
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
  // After the first ping and the pool's warm-up, every collection is checked in two round trips
  // (hello, then one listCollections): /ready waits for it, so a feed's first poll finds its verdict.
  fastify.database.readiness.startUp.add('the change feeds\' check', async () => {
    if (declared.size === 0) return
    const reasons = await unavailable.all?.(declared)
    if (reasons !== undefined && [...reasons.values()].every((reason) => reason === undefined)) {
      fastify.log.info('change feeds are available')
    }
  })
}

export default fp(changesPlugin, { name: 'changes', dependencies: ['config', 'errors', 'mongodb', 'lifecycle'] })
