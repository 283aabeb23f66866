// The change feeds' places (CHANGES_MAX_WAITING) and figures: what plugins/changes.ts gives as
// `fastify.changes`' admit, delivered, onLag and stats. Arrow properties: callers pass them on unbound.
import { ProblemError, shuttingDown } from '../schemas/problem.js'
import type { FeedStats } from './change-feeds.js'

export class FeedFigures implements FeedStats {
  readonly eventsSent = new Map<string, number>()
  readonly eventsSkipped = new Map<string, number>()
  readonly unreadable = new Map<string, number>()
  waiting = 0
  streams = 0
  private admitted = 0
  private readonly lagListeners = new Set<(seconds: number) => void>()

  /** `asleep`: the requests and streams asleep between reads now; `stopping`: whether the service stops. */
  constructor (
    private readonly maxWaiting: number,
    private readonly asleep: () => number,
    private readonly stopping: () => boolean
  ) {}

  get idle (): number {
    return this.asleep()
  }

  count (map: Map<string, number>, collection: string, by = 1): void {
    map.set(collection, (map.get(collection) ?? 0) + by)
  }

  /**
   * Takes a place for a waiting request or a stream; 503 OVERLOADED when none is free. Returns the
   * function that gives it back.
   */
  readonly admit = (kind: 'wait' | 'stream'): () => void => {
    if (this.stopping()) throw shuttingDown()
    if (this.admitted >= this.maxWaiting) {
      throw new ProblemError(503, 'OVERLOADED',
        `${this.maxWaiting} change-feed requests already wait or stream on this replica (CHANGES_MAX_WAITING); ` +
        'retry shortly, or ask without wait.', [], { 'retry-after': '1' })
    }
    this.admitted++
    const counted = kind === 'wait' ? 'waiting' : 'streams'
    this[counted]++
    let given = false
    return () => {
      if (given) return
      given = true
      this.admitted--
      this[counted]--
    }
  }

  readonly delivered = (collection: string, events: number, committedAt: readonly number[]): void => {
    if (events === 0) return
    this.count(this.eventsSent, collection, events)
    if (this.lagListeners.size === 0) return
    const now = Date.now()
    for (const at of committedAt) for (const listener of this.lagListeners) listener(Math.max(0, now - at) / 1000)
  }

  readonly onLag = (listener: (seconds: number) => void): () => void => {
    this.lagListeners.add(listener)
    return () => { this.lagListeners.delete(listener) }
  }
}
