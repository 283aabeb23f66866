// What the service knows of its change feeds, as the `fastify.changes` decorator gives it
// (plugins/changes.ts makes it): the shared streams, the places of waiting requests, the figures.
import type { SharedBudget } from '../database/database.js'
import type { ChangeHub } from './change-hub.js'
import type { CollectionIdentities } from './collection-identity.js'

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
  /**
   * Takes one of CHANGES_MAX_WAITING places for a waiting request or a stream; 503 OVERLOADED
   * when none is free. Returns the function that gives it back.
   */
  admit: (kind: 'wait' | 'stream') => () => void
  /** The identity of a collection's history (its UUID), which feed tokens carry. */
  identities: CollectionIdentities
  /**
   * Why the database cannot give a collection's feed, or undefined when it can; a check is made
   * within `budget` (the request's).
   */
  unavailable: (collection: string, scoped: boolean, budget?: SharedBudget) => Promise<string | undefined>
  /** Whether the service is stopping: waits and streams end. */
  readonly stopping: boolean
  /** Calls `listener` once when the service stops; returns the function that cancels it. */
  onStop: (listener: () => void) => () => void
  /**
   * Counts the events of an answer of `collection`'s feed, which their changes were committed at
   * (ms since the epoch).
   */
  delivered: (collection: string, events: number, committedAt: readonly number[]) => void
  /**
   * Calls `listener` with each delay from a change's commit to its delivery, in seconds; returns
   * the function that stops it.
   */
  onLag: (listener: (seconds: number) => void) => () => void
  readonly stats: FeedStats
}
