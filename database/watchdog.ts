// Our own check of the database connection, independent of the driver's server monitor: the
// fault-injection runs saw the driver stop recovering after an outage (its last heartbeat never
// finished), so a service that depends on the driver alone could stay 503 for ever. Every second
// the watchdog pings; when no ping has succeeded for `stuckAfterMs` while the database accepts
// TCP connections, the client is replaced. It also reports readiness and runs start-up work
// (indexes) once the database first answers.
import net from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import type { MongoClient } from 'mongodb'

const TICK_MS = 1000
const PING_TIMEOUT_MS = 1000
const PROBE_TIMEOUT_MS = 1000
const CLOSE_TIMEOUT_MS = 1500

export interface WatchdogOptions {
  client: MongoClient
  log: FastifyBaseLogger
  stuckAfterMs: number
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
  private ticking: Promise<void> | undefined
  private waitingLogged = false
  private readonly onConnected: Array<() => Promise<void>> = []
  private pendingConnected = true
  private readonly retiring = new Set<MongoClient>()

  constructor (private readonly options: WatchdogOptions) {
    this.client = options.client
  }

  /** Work to run once the database first answers (retried on later pings until it succeeds). */
  whenConnected (work: () => Promise<void>): void {
    this.onConnected.push(work)
  }

  /** Starts the checks; resolves after the first one (at most about a second). */
  async start (): Promise<void> {
    this.timer = setInterval(() => { this.tick().catch(() => {}) }, TICK_MS)
    this.timer.unref()
    await this.tick()
  }

  /** Stops the checks and closes the clients, waiting at most CLOSE_TIMEOUT_MS (closing talks to a database that may be silent). */
  async stop (): Promise<void> {
    clearInterval(this.timer)
    const closing = Promise.all([this.client, ...this.retiring].map(async (client) => await client.close(true).catch(() => {})))
    let timer: NodeJS.Timeout | undefined
    await Promise.race([closing, new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_TIMEOUT_MS) })])
    clearTimeout(timer)
  }

  /** Pings now; the answer also feeds the watchdog. */
  async ping (): Promise<boolean> {
    try {
      const ping = async () => await this.client.db('admin').command({ ping: 1 }, { signal: AbortSignal.timeout(PING_TIMEOUT_MS) })
      await (this.options.timed === undefined ? ping() : this.options.timed('ping', ping))
      this.succeeded()
      return true
    } catch (error) {
      this.failed(error as Error)
      return false
    }
  }

  private async tick (): Promise<void> {
    if (this.ticking !== undefined) return await this.ticking
    this.ticking = this.check().finally(() => { this.ticking = undefined })
    return await this.ticking
  }

  private async check (): Promise<void> {
    if (await this.ping()) {
      if (this.pendingConnected) await this.runConnectedWork()
      return
    }
    const now = Date.now()
    if (now - this.lastSuccess < this.options.stuckAfterMs || now - this.lastReplacement < this.options.stuckAfterMs) return
    if (await this.reachable()) this.replace()
  }

  private succeeded (): void {
    this.lastSuccess = Date.now()
    if (!this.ready) this.options.log.info(`database connected (${this.address()})`)
    this.ready = true
    this.waitingLogged = false
  }

  private failed (error: Error): void {
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
      const socket = net.connect({ host: host.host as string, port: host.port as number, timeout: PROBE_TIMEOUT_MS })
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
