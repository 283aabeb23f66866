// A fixed-window rate-limit store for @fastify/rate-limit (its LocalStore's counting, with
// neither continueExceeding nor backoff, which the service does not use) that can give a request
// back: a 304 does not count against the limit (docs/conditional-requests.md).
import { RecentMap } from './recent-map.js'

interface Window { current: number, startMs: number }
type Answer = (error: Error | null, state: { current: number, ttl: number }) => void

export class RefundableStore {
  // Callers kept at most (the oldest go first): the plugin's own default.
  private readonly windows = new RecentMap<Window>(5000)

  constructor (private readonly now: () => number = Date.now) {}

  incr (key: string, answer: Answer, timeWindow: number): void {
    const now = this.now()
    let window = this.windows.get(key)
    if (window === undefined || window.startMs + timeWindow <= now) window = { current: 0, startMs: now }
    window.current++
    this.windows.set(key, window)
    answer(null, { current: window.current, ttl: timeWindow - (now - window.startMs) })
  }

  read (key: string, answer: Answer, timeWindow: number): void {
    const now = this.now()
    const window = this.windows.get(key)
    if (window === undefined || window.startMs + timeWindow <= now) answer(null, { current: 0, ttl: 0 })
    else answer(null, { current: window.current, ttl: timeWindow - (now - window.startMs) })
  }

  /** One budget for every list: a route's own store is this one. */
  child (): this {
    return this
  }

  /** Gives back one request of `key`'s current window. */
  refund (key: string): void {
    const window = this.windows.get(key)
    if (window !== undefined && window.current > 0) window.current--
  }
}
