import fastifyMongo from '@fastify/mongodb'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { MongoClient, type Collection, type Document, type MongoClientOptions } from 'mongodb'
import { chooseShims } from '../database/driver-shims.js'
import { ClientReplacement, closeClients } from '../database/client-replacement.js'
import type { CommandListener, Database } from '../database/database.js'
import { boundedWork, timedWork } from '../database/bounded-work.js'
import { DatabaseReadiness } from '../database/readiness.js'
import { SlotSet } from '../lib/slot-set.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The database as it stands now: the client may be replaced (database/client-replacement.ts). */
    database: Database
  }
  interface FastifyRequest {
    /** When the request arrived, on the wall clock (Date.now) that its deadlines are kept by. */
    arrivedAt: number
    /** When the request's database work must end (Database#bounded), set on its arrival. */
    databaseDeadline: number
  }
}

/** How much longer than QUERY_TIMEOUT_MS the client waits for an answer before giving up itself. */
export const CLIENT_MARGIN_MS = 500

/**
 * How much longer than QUERY_TIMEOUT_MS a list may take to answer, whatever the database does
 * (the documented margin): the client's margin, then as long again to write the 503s of the
 * requests that gave up at the same moment.
 */
export const ANSWER_MARGIN_MS = 2 * CLIENT_MARGIN_MS

/**
 * How many connections the pool keeps open while idle, and how many it opens at a time (see
 * docs/operations.md, "When the database misbehaves").
 */
export const MIN_POOL_SIZE = 30
export const MAX_CONNECTING = 40

/**
 * The driver's options: its timeouts derived from the query budget, so that a slow database is
 * served rather than declared dead (docs/operations.md, "When the database misbehaves", says why
 * each). What the URI sets itself wins over all of these.
 */
export function clientOptions (queryTimeoutMs: number, uri = ''): MongoClientOptions {
  const options: MongoClientOptions = {
    appName: 'listing-api',
    // No command monitoring: the driver would make two event objects per command and relay each
    // through four emitters (docs/performance.md); the metrics time the service's own commands.
    monitorCommands: false,
    // As long as a request may wait in all; its own signal ends it sooner.
    serverSelectionTimeoutMS: queryTimeoutMs,
    // Connects, handshakes and heartbeats: any shorter, a database that answers slowly is Unknown.
    connectTimeoutMS: queryTimeoutMs,
    // Frequent heartbeats notice a returning server quickly (the default is 10 s).
    heartbeatFrequencyMS: 2000,
    // A warm pool, and a cold one that opens its connections together (the driver's default: 2 at a time).
    minPoolSize: MIN_POOL_SIZE,
    maxConnecting: MAX_CONNECTING
  }
  const search = uri.includes('?') ? uri.slice(uri.indexOf('?') + 1).toLowerCase() : ''
  for (const name of Object.keys(options) as Array<keyof MongoClientOptions>) {
    if (new RegExp(`(^|&)${name.toLowerCase()}=`).test(search)) delete options[name]
  }
  return options
}

/**
 * The driver's `Set` of sessions in use (`client.s.activeSessions`) becomes a SlotSet, whose churn keeps
 * no operation alive past the young-generation collections (docs/performance.md, "Why it is fast"
 * ("A steady tail")). Left alone when the driver holds it otherwise (test/plugins/mongodb-sessions.test.ts).
 */
export function withSlotSessions (client: MongoClient, on = true): MongoClient {
  if (!on) return client
  const state = (client as unknown as { s?: { activeSessions?: unknown } }).s
  if (state?.activeSessions instanceof Set && state.activeSessions.size === 0) {
    state.activeSessions = new SlotSet<object>()
  }
  return client
}

/**
 * One MongoClient at a time for the process; the first is handed to @fastify/mongodb (which
 * decorates `fastify.mongo`). It is created without connecting: the service starts before its
 * database, and a client stuck after an outage is replaced (database/client-replacement.ts).
 * The service reads the current one through `fastify.database`, never through `fastify.mongo`.
 */
async function mongodbPlugin (fastify: FastifyInstance) {
  const { MONGODB_URI, MONGODB_DB, QUERY_TIMEOUT_MS, SHIMS } = fastify.config
  if (MONGODB_URI === undefined) {
    throw new Error('MONGODB_URI must be resolved (server.ts or the test helper picks the database) ' +
      'before the app starts')
  }
  const shims = chooseShims(SHIMS)
  if (shims.warning !== undefined) fastify.log.warn(shims.warning)
  const slotSessions = shims.on.has('slot-sessions')
  const connect = () =>
    withSlotSessions(new MongoClient(MONGODB_URI, clientOptions(QUERY_TIMEOUT_MS, MONGODB_URI)), slotSessions)
  const commandListeners: CommandListener[] = []
  const timed = timedWork(commandListeners)
  const observers: Array<(client: MongoClient) => void> = []
  const client = connect()
  await fastify.register(fastifyMongo, { client, database: MONGODB_DB })

  let current = { client, db: client.db(MONGODB_DB), collections: new Map<string, Collection<Document>>() }
  const readiness = new DatabaseReadiness({
    client,
    log: fastify.log,
    // A ping may take as long as a request may; a slower database is not ready, and /ready says
    // so as soon as a ping has waited QUERY_TIMEOUT_MS.
    pingTimeoutMs: QUERY_TIMEOUT_MS + CLIENT_MARGIN_MS,
    silentAfterMs: QUERY_TIMEOUT_MS,
    timed
  })
  const replacement = new ClientReplacement({
    client,
    readiness,
    log: fastify.log,
    stuckAfterMs: fastify.config.DATABASE_STUCK_AFTER_MS ?? QUERY_TIMEOUT_MS,
    connectTimeoutMs: QUERY_TIMEOUT_MS + CLIENT_MARGIN_MS,
    createClient: connect,
    // The one place the current client changes: every route reads it through `fastify.database`.
    onReplace: (next) => {
      current = { client: next, db: next.db(MONGODB_DB), collections: new Map() }
      for (const attach of observers) attach(next)
    }
  })
  const budget = QUERY_TIMEOUT_MS + CLIENT_MARGIN_MS
  // Every request carries the deadline of its database work, from its arrival: time spent before
  // its first command (a queue behind a busy event loop, a key fetched) is part of its bound.
  fastify.decorateRequest('arrivedAt', 0)
  fastify.decorateRequest('databaseDeadline', 0)
  fastify.addHook('onRequest', (request, _reply, done) => {
    const now = Date.now()
    request.arrivedAt = now
    request.databaseDeadline = now + budget
    done()
  })
  fastify.decorate('database', {
    client: () => current.client,
    collection: (name: string) => {
      let collection = current.collections.get(name)
      if (collection === undefined) {
        collection = current.db.collection(name)
        current.collections.set(name, collection)
      }
      return collection
    },
    db: () => current.db,
    // The request's deadline reaches every operation as the driver's public `signal` option.
    bounded: boundedWork(readiness, budget),
    timed,
    onCommand: (listener) => { commandListeners.push(listener) },
    observe: (attach) => {
      observers.push(attach)
      attach(current.client)
    },
    readiness,
    replacement,
    shims: shims.on
  })
  // Not awaited: the service listens at once, and /ready says when the first ping and the
  // pool's warm-up are done (database/readiness.ts).
  fastify.addHook('onReady', (done) => {
    readiness.start()
    done()
  })
  // The database closes last, after in-flight requests (server.ts).
  fastify.addHook('onClose', async () => {
    readiness.stop()
    await Promise.all([replacement.stop(), closeClients([current.client])])
  })
}

export default fp(mongodbPlugin, { name: 'mongodb', dependencies: ['config', 'errors'] })
