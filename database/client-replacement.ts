// Replaces a MongoClient stuck after an outage: in mongodb 7.8.0 a heartbeat's write to a
// socket destroyed under it waits for a 'drain' that never comes, so the driver alone could leave
// the service 503 for ever (test/faults/reproduce-driver-hang.ts). No report of it found upstream
// (jira.mongodb.org, project NODE) as of driver 7.8.0; NODE-6370 (fixed in 6.10.0 as NODE-6394) is
// another race, a reply that arrives before the drain.
import net from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import type { MongoClient, ServerHeartbeatSucceededEvent } from 'mongodb'
import type { DatabaseReadiness } from './readiness.js'
import { atMost } from '../lib/pause.js'

const CLOSE_TIMEOUT_MS = 1500

export interface ReplacementOptions {
  client: MongoClient
  readiness: DatabaseReadiness
  log: FastifyBaseLogger
  /** No successful ping for this long while a member accepts TCP connections: the client is replaced. */
  stuckAfterMs: number
  /** How long a member may take to accept a TCP connection. */
  connectTimeoutMs: number
  createClient: () => MongoClient
  /** Told of every new client: the one place that hands it to the service (plugins/mongodb.ts). */
  onReplace: (client: MongoClient) => void
  /** How long a replaced client keeps serving the requests it already has (then it is closed). */
  retireAfterMs?: number
}

/** Closes clients, waiting at most CLOSE_TIMEOUT_MS (closing talks to a database that may be silent). */
export async function closeClients (clients: MongoClient[]): Promise<void> {
  await atMost(Promise.all(clients.map(async (client) => await client.close(true).catch(() => {}))), CLOSE_TIMEOUT_MS)
}

export class ClientReplacement {
  /** Clients replaced since start. */
  count = 0
  private client: MongoClient
  private lastReplacement = 0
  /** When the current client's monitor last had a heartbeat answered, and how long it took. */
  private lastHeartbeat = 0
  private heartbeatMs = 0
  private readonly heard = ({ duration }: ServerHeartbeatSucceededEvent): void => {
    this.lastHeartbeat = Date.now()
    this.heartbeatMs = duration
  }

  private readonly retiring = new Set<MongoClient>()

  constructor (private readonly options: ReplacementOptions) {
    this.client = options.client
    this.client.on('serverHeartbeatSucceeded', this.heard)
    options.readiness.onCheck(async (answered) => { if (!answered) await this.judge() })
  }

  /** Closes the replaced clients not yet retired; the current one is its owner's to close. */
  async stop (): Promise<void> {
    const retiring = [...this.retiring]
    this.retiring.clear()
    await closeClients(retiring)
  }

  /** After a failed check: a client stuck for `stuckAfterMs` is replaced, unless no member accepts connections. */
  private async judge (): Promise<void> {
    const { stuckAfterMs, readiness, log } = this.options
    const now = Date.now()
    if (now - readiness.lastSuccess < stuckAfterMs || now - this.lastReplacement < stuckAfterMs) return
    // The hang this works around stops the monitor's heartbeats. A client whose heartbeats are
    // answered is talking to a slow database: a new one would start its handshakes over, and on a
    // database slow after an outage, replaced every few seconds, none would finish.
    // The next heartbeat comes a period after the last, and takes as long: a window of both, twice.
    const period = this.client.options.heartbeatFrequencyMS ?? 10_000
    const heartbeatWindow = Math.max(stuckAfterMs, 2 * (period + this.heartbeatMs))
    if (now - this.lastHeartbeat < heartbeatWindow) {
      log.debug(`the client has not recovered for ${now - readiness.lastSuccess} ms, but its heartbeats are ` +
        'answered: kept (the database is slow, not the client stuck)')
      return
    }
    if (await this.reachable()) {
      this.replace()
    } else {
      log.debug(`the client has not recovered for ${now - readiness.lastSuccess} ms, and no member of the database ` +
        'accepts connections: kept (a new client would not help)')
    }
  }

  /** Whether any member of the database accepts a TCP connection now (all are tried together). */
  private async reachable (): Promise<boolean> {
    const accepts = (address: string) => new Promise<boolean>((resolve) => {
      // Read by hand: the driver's HostAddress (typed as public in mongodb 7.8) is not exported at run time.
      const colon = address.lastIndexOf(':')
      const path = address.startsWith('/') || colon < 0
        ? { path: address }
        : { host: address.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(address.slice(colon + 1)) }
      const socket = net.connect({ ...path, timeout: this.options.connectTimeoutMs })
      const done = (ok: boolean) => { socket.destroy(); resolve(ok) }
      socket.once('connect', () => done(true)).once('timeout', () => done(false)).once('error', () => done(false))
    })
    const answers = await Promise.all(this.options.readiness.knownHosts().map(accepts))
    return answers.includes(true)
  }

  private replace (): void {
    const old = this.client
    old.off('serverHeartbeatSucceeded', this.heard)
    this.client = this.options.createClient()
    this.client.on('serverHeartbeatSucceeded', this.heard)
    this.lastHeartbeat = 0
    this.options.readiness.watch(this.client)
    this.lastReplacement = Date.now()
    this.count++
    this.options.onReplace(this.client)
    this.options.log.warn('the database accepts connections but the client has not recovered for ' +
      `${this.options.stuckAfterMs} ms: replaced the client (${this.count} so far)`)
    this.retiring.add(old)
    setTimeout(() => {
      if (!this.retiring.delete(old)) return
      old.close(true).catch(() => {})
    }, this.options.retireAfterMs ?? 10_000).unref()
  }
}
