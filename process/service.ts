import { createRequire } from 'node:module'
import closeWithGrace from 'close-with-grace'
import Fastify from 'fastify'
import app, { serverOptions } from '../app.js'
import { chooseDatabase, describeDatabase } from './choose-database.js'
import { FORWARDED_SIGNALS, onShutdownSignals } from './signals.js'
import { ConfigError, listenError } from '../plugins/config.js'
import type { Config } from '../schemas/config.js'
import { CLIENT_MARGIN_MS } from '../plugins/mongodb.js'

/** Human-readable logs when a person is watching: stdout a terminal, not production, pino-pretty installed. */
function prettyLogs (): boolean {
  if (process.stdout.isTTY !== true || process.env.NODE_ENV === 'production') return false
  try {
    createRequire(import.meta.url).resolve('pino-pretty')
    return true
  } catch {
    return false
  }
}

export interface ServiceOptions {
  /** The configuration, read from the environment (server.ts reads it before importing this). */
  config: Config
  /** Runs last when the service closes, after the database (tracing flushes its spans here). */
  onClosed?: () => Promise<void>
  /** Where spans go, when tracing is on: logged at start. */
  tracingEndpoint?: string
}

/** How long a shutdown may run past SHUTDOWN_DELAY_MS + QUERY_TIMEOUT_MS before its exit is forced. */
const DRAIN_MARGIN_MS = 4000

/** A shutdown's bound: once it has passed, the exit is forced, with code 1 (docs/operations.md). */
export const shutdownBoundMs = (
  { SHUTDOWN_DELAY_MS, QUERY_TIMEOUT_MS }: Pick<Config, 'SHUTDOWN_DELAY_MS' | 'QUERY_TIMEOUT_MS'>
): number => SHUTDOWN_DELAY_MS + QUERY_TIMEOUT_MS + DRAIN_MARGIN_MS

/** The service as `npm start` runs it: config, database (demo data when embedded), app, graceful drain. */
export async function runService ({ config, onClosed, tracingEndpoint }: ServiceOptions): Promise<void> {
  const fastify = Fastify(serverOptions(config, { pretty: prettyLogs() }))
  let database
  try {
    database = await chooseDatabase({ standInProcess: true, onProgress: (message) => { fastify.log.info(message) } })
  } catch (error) {
    fastify.log.fatal((error as Error).message)
    process.exit(1)
  }
  fastify.log.info(describeDatabase(database))
  if (tracingEndpoint !== undefined) fastify.log.info(`tracing on: spans exported over OTLP to ${tracingEndpoint}`)

  // The embedded databases start empty: fill them so that the API has something to list.
  if (database.embedded) {
    // Imported here: production images carry no demo data (they always have MONGODB_URI).
    const { seedDemoData } = await import('../demo-data/seed.js')
    const counts = await seedDemoData(database.uri, config.MONGODB_DB)
    fastify.log.info({ documents: counts }, 'demo data loaded into the embedded database')
  }
  let writer: { stop: () => Promise<void> } | undefined
  if (config.DEMO_WRITES === 'on' && database.embedded) {
    const { startDemoWriter } = await import('../demo-data/writer.js')
    const started = await startDemoWriter(database.uri, config.MONGODB_DB, (message) => { fastify.log.info(message) })
    writer = started
    fastify.log.info('demo writes on: a project changes every two seconds; ' +
      `follow /projects/${started.project}/registrations/changes`)
  } else if (config.DEMO_WRITES === 'on') {
    fastify.log.warn('DEMO_WRITES=on is ignored: ' +
      'the demo writer writes to the embedded database only, never to MONGODB_URI')
  }

  try {
    await fastify.register(app, { config: { ...config, MONGODB_URI: database.uri } })
  } catch (error) {
    await stop(error, database)
  }

  const { SHUTDOWN_DELAY_MS, QUERY_TIMEOUT_MS } = config
  // Drain (docs/operations.md): not ready at once, keep serving while load balancers notice, stop
  // accepting (new connections refused, kept-alive ones closed: a proxy retries elsewhere), let
  // in-flight requests finish (each is bounded by the query timeout), database last.
  // SIGINT and SIGTERM are taken by onShutdownSignals (./signals.ts), which lets a copy of the
  // first go; close-with-grace keeps the others, its errors and its time limit.
  let closing = false
  let received: string | undefined
  const grace = closeWithGrace({
    delay: shutdownBoundMs(config), skip: [...FORWARDED_SIGNALS]
  }, async ({ signal, err }) => {
    closing = true
    if (err !== undefined) fastify.log.error({ err }, 'server closing after an error')
    else {
      fastify.log.info(`${signal ?? received} received: /ready is 503; ` +
        `serving ${SHUTDOWN_DELAY_MS} ms more, then closing`)
    }
    await fastify.lifecycle.drain({
      delayMs: err === undefined ? SHUTDOWN_DELAY_MS : 0,
      settleMs: QUERY_TIMEOUT_MS + CLIENT_MARGIN_MS,
      beforeStop: async () => { await writer?.stop() }
    })
    await fastify.close()
    await database.close()
    await onClosed?.()
    fastify.log.info('closed')
  })
  const exitAtOnce = (signal: string): never => {
    fastify.log.error(`second ${signal}, exiting`)
    process.exit(1)
  }
  onShutdownSignals({
    first: (signal) => {
      if (closing) exitAtOnce(signal)
      received = signal
      grace.close()
    },
    again: exitAtOnce
  })

  try {
    const address = await fastify.listen({ port: config.PORT, host: config.HOST })
    fastify.log.info(`API at ${address}/projects, docs at ${address}/docs (OpenAPI document ${address}/docs/json), ` +
      `health at ${address}/health and ${address}/ready`)
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException
    await stop(code === 'EADDRINUSE' || code === 'EACCES'
      ? listenError('PORT', config.PORT, config.HOST, error as NodeJS.ErrnoException)
      : error, database)
  }
}

/** Start-up failed: a configuration problem is one line naming the variable, anything else its stack; exit 1. */
async function stop (error: unknown, database: { close: () => Promise<void> }): Promise<never> {
  console.error(error instanceof ConfigError ? error.message : error)
  await database.close().catch(() => {})
  process.exit(1)
}
