// Whether the service may take requests (what /ready reports), from our own pings of the
// database and the driver's view of its servers. Half a second after each ping ends, the next
// is sent; whoever must act on its outcome (the client replacement, the start-up indexes)
// hears of each check through onCheck.
import type { FastifyBaseLogger } from 'fastify'
import type {
  MongoClient, ServerHeartbeatFailedEvent, TopologyDescription, TopologyDescriptionChangedEvent
} from 'mongodb'
import { within } from '../lib/pause.js'
import { everyMemberRefuses } from './refusal.js'
import { StartUpWork } from './start-up-work.js'

/** The pause between the end of one ping and the next. */
export const TICK_MS = 500

/** Whether the service may take requests now, and if not, why (what /ready says). */
export type Readiness = { ready: true } | { ready: false, reason: string }

export interface ReadinessOptions {
  client: MongoClient
  log: FastifyBaseLogger
  /** How long a ping may take before it counts as failed (the query budget: a slow database is not a dead one). */
  pingTimeoutMs: number
  /** A ping unanswered this long makes the service not ready, before it times out (QUERY_TIMEOUT_MS). */
  silentAfterMs?: number
  /** Times the pings (Database#timed, database/bounded-work.ts, for the metrics). */
  timed?: <T>(command: string, work: () => Promise<T>) => Promise<T>
  /** The clock that silence is measured on: performance.now unless a test moves one. */
  now?: () => number
}

/** Hears how each of the periodic checks ended: whether the database answered its ping. */
export type CheckListener = (answered: boolean) => void | Promise<void>

export class DatabaseReadiness {
  /** Whether the last ping succeeded. */
  ready = false
  /** When a ping last succeeded (Date.now()), or when the checks were made. */
  lastSuccess = Date.now()
  private client: MongoClient
  private timer: NodeJS.Timeout | undefined
  private stopped = true
  private firstPing = false
  /** When `ready` last changed (0: never, so the first connection is warmed by start, not here). */
  private lastReadyChange = 0
  private pinging: Promise<boolean> | undefined
  /** When the ping under way was sent (by `now`), if one is. */
  private pingSentAt: number | undefined
  /**
   * When the database last answered anything (a request's command, a handshake, a heartbeat) while
   * a ping was under way (by `now`).
   */
  private answeredAt = 0
  /** When a request last met a database it could not reach (by `now`), if since the last good ping. */
  private suspectedAt: number | undefined
  private readonly now: () => number
  /** The driver's view of the servers, from its monitoring events; undefined until it has one. */
  private topology: TopologyDescription | undefined
  private warming: Promise<void> | undefined
  private warmedUp = false
  private waitingLogged = false
  /** Stopped for good: the client is closing. */
  private ended = false
  private readonly checkListeners: CheckListener[] = []
  /** What /ready waits for once the first ping and the warm-up have ended. */
  readonly startUp = new StartUpWork()

  constructor (private readonly options: ReadinessOptions) {
    this.client = options.client
    this.now = options.now ?? (() => performance.now())
    this.follow(this.client)
  }

  /** Checks `client` from now on: the one that replaced the client checked so far. */
  watch (client: MongoClient): void {
    this.client = client
    this.follow(client)
  }

  /** Adds a listener of every periodic check; the next check waits for what it returns. */
  onCheck (listener: CheckListener): void {
    this.checkListeners.push(listener)
  }

  /** Keeps the driver's view of the servers of `client` (the SDAM monitoring events, public API). */
  private follow (client: MongoClient): void {
    this.topology = undefined
    client.on('topologyDescriptionChanged', (event: TopologyDescriptionChangedEvent) => {
      if (client !== this.client) return
      this.topology = event.newDescription
    })
    // While not ready, the monitor's first failed heartbeat says what is waited for, long
    // before a ping gives up (it waits for server selection).
    client.on('serverHeartbeatFailed', (event: ServerHeartbeatFailedEvent) => {
      if (client === this.client && !this.ready) this.failed(event.failure)
    })
    // Any answer of the database says it is not silent: a new connection's handshake (a ping
    // that must open its connection waits two round trips on a slow database), the monitor's
    // heartbeat. Public events of the pool and of the server monitor.
    const heard = (): void => { if (client === this.client) this.heard() }
    client.on('connectionReady', heard)
    client.on('serverHeartbeatSucceeded', heard)
  }

  /** The database answered something while a ping is under way: it is not silent. */
  private heard (): void {
    if (this.pingSentAt !== undefined) this.answeredAt = this.now()
  }

  /**
   * Whether the service may take requests, from what is known now, without asking the
   * database: the warm-up is done, no member refuses connections, the last ping was answered,
   * none has gone unanswered for `silentAfterMs`, and no request has met an unreachable database
   * since. The driver's view of the servers says no more than the refusal: it lags both ways (a
   * check begun in an outage can fail after the database answers again, and a connection
   * refused as it opens does not count).
   */
  readiness (): Readiness {
    if (!this.warmedUp) {
      return { ready: false, reason: 'starting: the first ping and the pool\'s first connections are under way' }
    }
    if (!this.startUp.done) return { ready: false, reason: 'starting: the start-up checks are under way' }
    if (this.refusesConnections()) return { ready: false, reason: 'the database refuses connections' }
    const silentAfterMs = this.options.silentAfterMs ?? this.options.pingTimeoutMs
    if (this.pingSentAt !== undefined && this.now() - Math.max(this.pingSentAt, this.answeredAt) > silentAfterMs) {
      return { ready: false, reason: `the database has not answered a ping for ${silentAfterMs} ms` }
    }
    if (!this.ready) return { ready: false, reason: 'the database does not answer a ping' }
    if (this.suspectedAt !== undefined) {
      return { ready: false, reason: 'a request could not reach the database; a ping is checking' }
    }
    return { ready: true }
  }

  /**
   * Whether the database refuses connections now, from the driver's view of the servers (each
   * checked every heartbeatFrequencyMS, and every 500 ms while a ping waits for one): every
   * member it knows failed its last check because its connection was refused. Requests then fail
   * at once rather than wait out server selection (database/bounded-work.ts). A replica set in an
   * election is not refusing: its members answer their checks as secondaries while it has no
   * primary, and requests wait for the new one within their budget; nor is a silent database,
   * whose checks time out.
   */
  refusesConnections (): boolean {
    return everyMemberRefuses(this.topology)
  }

  /**
   * Starts the checks and opens the pool, in the background: the service listens meanwhile
   * (its /health answers, its /ready says it is starting). That first ping may take twice as
   * long as the others: from a cold start it waits for the server's first heartbeat and for a
   * new connection's handshake as well as for its own answer, three round trips on a slow database.
   * The start-up work follows, whatever they found.
   */
  start (): void {
    this.firstPing = true
    this.stopped = false
    // The pool is opened beside the first ping: both wait for the server's first heartbeat, then
    // for their connections, which the pool opens together.
    this.warming = Promise.all([this.tick(), this.warm()]).then(() => { this.warmedUp = true })
    this.warming.catch(() => {}).finally(() => { this.startUp.run(2 * this.options.pingTimeoutMs, this.options.log) })
  }

  /** Resolves when the first check, the pool's warm-up and then the start-up work have ended. */
  async started (): Promise<void> {
    await this.warming?.finally(async () => { await this.startUp.ended })
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
      await this.client.db('admin')
        .command({ ping: 1 }, { signal: AbortSignal.timeout(2 * this.options.pingTimeoutMs) }).catch(() => {})
    }))
  }

  /**
   * A request could not reach the database (a broken connection, a refusal): not ready until a
   * ping sent after this succeeds, and one is sent now. The driver does not mark a server
   * Unknown for a connection that fails as it opens (it takes that for overload), and between
   * its heartbeats (heartbeatFrequencyMS) a request often learns first.
   */
  suspect (): void {
    this.suspectedAt = this.now()
    if (!this.stopped) this.ping().catch(() => {})
  }

  /**
   * A request's command was answered: the database is within reach, as a ping would have
   * said (whatever was suspected, and however the last ping ended).
   */
  answered (): void {
    // An answer while a ping waits: the database is not silent, whatever that ping meets.
    this.heard()
    if (this.ready && this.suspectedAt === undefined) return
    this.suspectedAt = undefined
    this.succeeded()
  }

  /**
   * Stops the checks, before the client closes: a ping under way, or a heartbeat, that the close
   * cuts short (MongoTopologyClosedError) says nothing of the database, and is not logged.
   */
  stop (): void {
    this.stopped = true
    this.ended = true
    clearTimeout(this.timer)
  }

  /**
   * Pings, or joins the ping under way (probes and the periodic checks share it, so a slow
   * database gets one ping at a time from this process); the answer feeds the readiness.
   */
  async ping (): Promise<boolean> {
    this.pinging ??= this.pingOnce().finally(() => { this.pinging = undefined })
    return await this.pinging
  }

  private async pingOnce (): Promise<boolean> {
    const timeoutMs = this.firstPing ? 2 * this.options.pingTimeoutMs : this.options.pingTimeoutMs
    this.firstPing = false
    const sentAt = this.pingSentAt = this.now()
    try {
      const ping = async () =>
        await this.client.db('admin').command({ ping: 1 }, { signal: AbortSignal.timeout(timeoutMs) })
      const pinged = this.options.timed === undefined ? ping() : this.options.timed('ping', ping)
      // The signal ends each of the command's waits (test/database/deadline.test.ts); were a driver
      // to drop it, the ping still ends a tick later, and the checks go on.
      await within(pinged, timeoutMs + TICK_MS, () => new DOMException(`no answer in ${timeoutMs} ms`, 'TimeoutError'))
      if (this.suspectedAt !== undefined && this.suspectedAt < sentAt) this.suspectedAt = undefined
      this.succeeded()
      return true
    } catch (error) {
      this.failed(error as Error)
      return false
    } finally {
      this.pingSentAt = undefined
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
    const answered = await this.ping()
    if (this.stopped) return
    await Promise.all(this.checkListeners.map(async (listener) => { await listener(answered) }))
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
    if (this.ended) return
    if (this.ready) this.lastReadyChange = Date.now()
    this.ready = false
    if (this.waitingLogged) return
    this.waitingLogged = true
    this.options.log.warn(`waiting for the database at ${this.address()}: ${error.name}; ` +
      'lists answer 503 until it answers')
  }

  private address (): string { return this.knownHosts().join(',') || 'unknown' }

  /**
   * Every member of the database the driver knows: the servers of its topology description
   * (a replica set's members as its primary lists them, an SRV name's hosts once resolved),
   * else the URI's seed list.
   */
  knownHosts (): string[] {
    if (this.topology !== undefined && this.topology.servers.size > 0) return [...this.topology.servers.keys()]
    return this.client.options.hosts.map((host) => host.socketPath ?? `${host.host ?? ''}:${host.port ?? 27017}`)
  }
}
