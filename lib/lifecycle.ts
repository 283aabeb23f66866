// Where the process is in its shutdown, as the `fastify.lifecycle` decorator gives it
// (plugins/lifecycle.ts makes it; docs/operations.md).
import type { ServerResponse } from 'node:http'

export interface Lifecycle {
  /** /ready answers 503 (SIGTERM received). */
  draining: boolean
  /** New requests are refused with 503. */
  closing: boolean
  /** Requests being answered now. */
  inFlight: number
  /**
   * Stops taking requests: the listener refuses new connections, idle kept-alive connections
   * are closed, and the answers still being worked on close theirs (`Connection: close`), so
   * that a proxy sends nothing more here and retries elsewhere what it could not send.
   */
  stopAccepting: () => void
  /** Resolves when no request is in flight, or after `ms`. */
  settled: (ms: number) => Promise<void>
  /** Calls `listener` when the service stops accepting requests (change feeds end their waits and streams then). */
  onStop: (listener: () => void) => void
  /**
   * Leaves an answer that is written over a long time (a change feed's stream) out of
   * SEND_TIMEOUT_MS while it is written (it bounds its reader itself); the function returned
   * puts it back under the limit, once it has ended.
   */
  exempt: (response: ServerResponse) => () => void
  /**
   * The drain after SIGTERM (process/service.ts): /ready 503 at once, requests still served for
   * `delayMs` while load balancers notice, then no new ones, then those in flight for `settleMs` at most.
   */
  drain: (options: DrainOptions) => Promise<void>
}

export interface DrainOptions {
  /** SHUTDOWN_DELAY_MS, or 0 (after an error). */
  delayMs: number
  /** How long the requests in flight may still take once no new one is taken. */
  settleMs: number
  /** Runs once the delay is over, before new requests are refused. */
  beforeStop?: () => Promise<void>
  /** Waits out the delay: a timer unless a test ends the delay itself. */
  wait?: (ms: number) => Promise<void>
}
