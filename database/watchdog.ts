// Our own check of the database connection, independent of the driver's server monitor: the
// fault-injection runs saw the driver stop recovering after an outage (its last heartbeat never
// finished), so a service that depends on the driver alone could stay 503 for ever. A second
// after each ping ends, the watchdog pings again; when no ping has succeeded for `stuckAfterMs` while the database accepts
// TCP connections, the client is replaced. It also reports readiness and runs start-up work
// (indexes) once the database first answers.
import net from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import type { MongoClient } from 'mongodb'

/** The pause between the end of one ping and the next. */
const TICK_MS = 1000
const CLOSE_TIMEOUT_MS = 1500

export interface WatchdogOptions {
  client: MongoClient
  log: FastifyBaseLogger
  stuckAfterMs: number
  /** How long a ping may take before it counts as failed (the query budget: a slow database is not a dead one). */
  pingTimeoutMs: number
  createClient: () => MongoClient
  onReplace: (client: MongoClient) => void
  /** How long a replaced client keeps serving the requests it already has (then it is closed). */
  retireAfterMs?: number
  /** Times the pings (plugins/mongodb.ts Database#timed, for the metrics). */
  timed?: <T>(command: string, work: () => Promise<T>) => Promise<T>
}

export class DatabaseWatchdog {
  /** Whether the last ping succeeded. */
  ready = false
  replacements = 0
  private client: MongoClient
  private lastSuccess = Date.now()
  private lastReplacement = 0
  private timer: NodeJS.Timeout | undefined
  private stopped = true
  private firstPing = false
  /** When `ready` last changed (0: never, so the first connection is warmed by start, not here). */
  private lastReadyChange = 0
  private pinging: Promise<boolean> | undefined
  private waitingLogged = false
  private readonly onConnected: Array<() => Promise<void>> = []
  private pendingConnected = true
  private connectedWork: Promise<void> | undefined
  private readonly retiring = new Set<MongoClient>()

  constructor (private readonly options: WatchdogOptions) {
    this.client = options.client
  }

  /** Work to run once the database first answers (retried on later pings until it succeeds). */
  whenConnected (work: () => Promise<void>): void {
    this.onConnected.push(work)
  }

  /**
   * Starts the checks and opens the pool; resolves after the first check. That first ping may take twice as long as
   * the others: from a cold start it waits for the server's first heartbeat and for a new
   * connection's handshake as well as for its own answer, three round trips on a slow database.
   */
  async start (): Promise<void> {
    this.firstPing = true
    this.stopped = false
    // The pool is opened beside the first ping: both wait for the server's first heartbeat, then
    // for their connections, which the pool opens together.
    await Promise.all([this.tick(), this.warm()])
  }

  /**
   * Opens the pool's minPoolSize connections at once, by as many pings side by side (the pool opens
   * maxConnecting at a time for waiting checkouts; minPoolSize alone opens one at a time, one
   * round trip each). On a slow database a request that must first open its connection waits
   * two round trips, so a cold pool would fail a burst that a warm one serves.
   */
  async warm (): Promise<void> {
    const count = this.client.options.minPoolSize ?? 0
    // As long as the first ping may take: a ping aborted mid-way closes its connection, the
    // opposite of what this is for.
    await Promise.all(Array.from({ length: count }, async () => {
      await this.client.db('admin').command({ ping: 1 }, { signal: AbortSignal.timeout(2 * this.options.pingTimeoutMs) }).catch(() => {})
    }))
  }

  /** Resolves when the start-up work under way (if any) has ended. */
  async startupWork (): Promise<void> {
    await this.connectedWork
  }

  /** Stops the checks and closes the clients, waiting at most CLOSE_TIMEOUT_MS (closing talks to a database that may be silent). */
  async stop (): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    const closing = Promise.all([this.client, ...this.retiring].map(async (client) => await client.close(true).catch(() => {})))
    let timer: NodeJS.Timeout | undefined
    await Promise.race([closing, new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_TIMEOUT_MS) })])
    clearTimeout(timer)
  }

  /**
   * Pings, or joins the ping under way (probes and the watchdog's own checks share it, so a
   * slow database gets one ping at a time from this process); the answer feeds the watchdog.
   */
  async ping (): Promise<boolean> {
    this.pinging ??= this.pingOnce().finally(() => { this.pinging = undefined })
    return await this.pinging
  }

  private async pingOnce (): Promise<boolean> {
    const timeoutMs = this.firstPing ? 2 * this.options.pingTimeoutMs : this.options.pingTimeoutMs
    this.firstPing = false
    try {
      const ping = async () => await this.client.db('admin').command({ ping: 1 }, { signal: AbortSignal.timeout(timeoutMs) })
      await (this.options.timed === undefined ? ping() : this.options.timed('ping', ping))
      this.succeeded()
      return true
    } catch (error) {
      this.failed(error as Error)
      return false
    }
  }

  /** One check, then the next TICK_MS after it ends: checks never overlap, however slow the database. */
  private async tick (): Promise<void> {
    try {
      await this.check()
    } finally {
      if (!this.stopped) {
        this.timer = setTimeout(() => { this.tick().catch(() => {}) }, TICK_MS)
        this.timer.unref()
      }
    }
  }

  private async check (): Promise<void> {
    if (await this.ping()) {
      // In the background: start-up work (index builds) on a slow database can take longer
      // than a start is allowed, and requests are served meanwhile.
      if (this.pendingConnected) this.connectedWork ??= this.runConnectedWork().finally(() => { this.connectedWork = undefined })
      return
    }
    const now = Date.now()
    if (now - this.lastSuccess < this.options.stuckAfterMs || now - this.lastReplacement < this.options.stuckAfterMs) return
    if (await this.reachable()) this.replace()
  }

  private succeeded (): void {
    this.lastSuccess = Date.now()
    // Back after an outage (the pool was cleared): warm it again, in the background.
    if (!this.ready && !this.firstPing && this.lastReadyChange > 0) this.warm().catch(() => {})
    if (!this.ready) {
      this.lastReadyChange = Date.now()
      this.options.log.info(`database connected (${this.address()})`)
    }
    this.ready = true
    this.waitingLogged = false
  }

  private failed (error: Error): void {
    if (this.ready) this.lastReadyChange = Date.now()
    this.ready = false
    if (this.waitingLogged) return
    this.waitingLogged = true
    this.options.log.warn(`waiting for the database at ${this.address()}: ${error.name}; lists answer 503 until it answers`)
  }

  private async runConnectedWork (): Promise<void> {
    try {
      for (const work of this.onConnected) await work()
      this.pendingConnected = false
    } catch (error) {
      this.options.log.warn({ err: error }, 'start-up work on the database failed; retrying at the next check')
    }
  }

  private address (): string {
    const host = this.client.options.hosts[0]
    return host === undefined ? 'unknown' : `${host.host ?? host.socketPath ?? ''}:${host.port ?? ''}`
  }

  /** Whether the database's first host accepts a TCP connection now. */
  private async reachable (): Promise<boolean> {
    const host = this.client.options.hosts[0]
    if (host?.host === undefined || host.port === undefined) return true
    return await new Promise((resolve) => {
      const socket = net.connect({ host: host.host as string, port: host.port as number, timeout: this.options.pingTimeoutMs })
      const done = (ok: boolean) => { socket.destroy(); resolve(ok) }
      socket.once('connect', () => done(true)).once('timeout', () => done(false)).once('error', () => done(false))
    })
  }

  private replace (): void {
    const old = this.client
    this.client = this.options.createClient()
    this.lastReplacement = Date.now()
    this.replacements++
    this.options.onReplace(this.client)
    this.options.log.warn(`the database accepts connections but the client has not recovered for ${this.options.stuckAfterMs} ms: replaced the client (${this.replacements} so far)`)
    this.retiring.add(old)
    setTimeout(() => {
      this.retiring.delete(old)
      old.close(true).catch(() => {})
    }, this.options.retireAfterMs ?? 10_000).unref()
  }
}
