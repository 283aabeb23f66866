import type { FastifyInstance } from 'fastify'
import { ObjectId, type Collection, type Db } from 'mongodb'
import type { Test } from 'tap'
import { ANSWER_MARGIN_MS, clientOptions } from '../../plugins/mongodb.js'
import { build, type BuildOptions } from '../helpers/build.js'
import { testDatabase } from '../helpers/database.js'
import { feedProject } from '../helpers/feeds.js'
import { timeUntil, until } from '../helpers/until.js'
import { startFaultProxy, type FaultProxy } from './fault-proxy.js'

/** Short timeouts keep the fault suite fast; the rules are the same at any value. */
export const QUERY_TIMEOUT_MS = 1000
/** What the contract promises: an answer within QUERY_TIMEOUT_MS plus the documented margin. */
export const ANSWER_BOUND_MS = QUERY_TIMEOUT_MS + ANSWER_MARGIN_MS
/** Scheduling noise on a busy machine, for a test waiting on a state it expects; never added to an answer's bound. */
export const SLACK_MS = 1000
export const RECOVERY_BOUND_MS = 10_000
/**
 * The driver's monitor checks the server this often (heartbeatFrequencyMS);
 * a check times out after QUERY_TIMEOUT_MS (connectTimeoutMS).
 */
export const HEARTBEAT_MS = clientOptions(QUERY_TIMEOUT_MS).heartbeatFrequencyMS as number

/** The test database (the stand-in, or MONGODB_URI), reached through a fault proxy. */
export async function proxiedDatabase (t: Test): Promise<FaultProxy> {
  const { uri } = await testDatabase()
  const host = new URL(uri.replace(/^mongodb(\+srv)?:\/\//, 'http://')).host.split(',')[0] as string
  const [hostname = '127.0.0.1', port = '27017'] = host.split(':')
  const proxy = await startFaultProxy({ host: hostname, port: Number(port) })
  t.teardown(proxy.close)
  return proxy
}

export async function faultApp (
  t: Test, proxy: FaultProxy, { logLines }: Pick<BuildOptions, 'logLines'> = {}
): Promise<FastifyInstance> {
  return await build(t,
    { databaseUri: proxy.uri, config: { QUERY_TIMEOUT_MS, DATABASE_STUCK_AFTER_MS: 2000 }, logLines })
}

/**
 * A fault app whose collections are prepared for feeds, with one project: its sessions' feed is
 * `path`, and `sessions` is the collection, written to directly (not through the proxy's faults).
 */
export async function feedFaultApp (t: Test): Promise<{
  proxy: FaultProxy, fastify: FastifyInstance, db: Db, project: ObjectId, sessions: Collection, path: string
}> {
  const proxy = await proxiedDatabase(t)
  const fastify = await faultApp(t, proxy)
  const db = fastify.mongo.db as Db
  const { project, path } = await feedProject(db, 'sessions')
  return { proxy, fastify, db, project, sessions: db.collection('sessions'), path }
}

export interface Timed { status: number, code?: string, ms: number, retryAfter?: string }

/** One request, timed; the problem code when it is one. */
export async function timed (fastify: FastifyInstance, url: string): Promise<Timed> {
  const started = Date.now()
  const res = await fastify.inject(url)
  const ms = Date.now() - started
  const code = res.statusCode >= 400 ? (res.json() as { code?: string }).code : undefined
  return { status: res.statusCode, code, ms, retryAfter: res.headers['retry-after'] as string | undefined }
}

/** Polls `url` until it answers 200; the time it took, or Infinity past `withinMs`. */
export async function recoveryTime (
  fastify: FastifyInstance, url: string, withinMs = RECOVERY_BOUND_MS + 5000
): Promise<number> {
  return await timeUntil(async () => (await fastify.inject(url)).statusCode === 200, withinMs, 200)
}

export interface ServerChecks { failedAt: number, succeededAt: number }

/**
 * When the driver of `app`'s current client last checked the server, by outcome. A failed check
 * marks the server Unknown: requests then fail at server selection, without waiting on it.
 */
export function serverChecks (app: FastifyInstance): ServerChecks {
  const seen = { failedAt: 0, succeededAt: 0 }
  app.database.observe((client) => {
    client.on('serverHeartbeatFailed', () => { if (client === app.database.client()) seen.failedAt = Date.now() })
    client.on('serverHeartbeatSucceeded', () => { if (client === app.database.client()) seen.succeededAt = Date.now() })
  })
  return seen
}

/**
 * Waits for the driver's next successful check of the server. A database that goes silent just
 * then is noticed at the timeout of the check after it, HEARTBEAT_MS + QUERY_TIMEOUT_MS later:
 * a request sent at once meets a server the driver still trusts, and ends at its own limit.
 * A precondition, not a bound under test: a process stalled past a check's QUERY_TIMEOUT_MS by the
 * machine fails that check, and the driver checks again; so it may take up to RECOVERY_BOUND_MS.
 */
export async function justChecked (checks: ServerChecks): Promise<boolean> {
  const since = Date.now()
  return await until(() => checks.succeededAt > since && checks.succeededAt > checks.failedAt, RECOVERY_BOUND_MS)
}
