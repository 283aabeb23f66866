import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import type { Test } from 'tap'
import app, { serverOptions } from '../../app.js'
import { readConfig } from '../../plugins/config.js'
import type { Config } from '../../schemas/config.js'
import { testDatabase, uniqueDatabaseName } from './database.js'

// Tests run the TypeScript sources through `--import=tsx`, which @fastify/autoload cannot detect by itself.
process.env.FASTIFY_AUTOLOAD_TYPESCRIPT = '1'

export interface BuildOptions {
  config?: Partial<Config>
  /** A database of the test's own (one it will stop, say); else the test process's database. */
  databaseUri?: string
  /** Runs after the app is registered and before it is ready: test-only routes go here. */
  extend?: (app: FastifyInstance) => void
  /** Hears of every route as it is added, the app's own included. */
  onRoute?: (route: RouteOptions) => void
  /** Collects the app's log lines (parsed) instead of discarding them. */
  logLines?: Array<Record<string, unknown>>
  /** The app's clock for what it remembers a while (the project cache, the key set's pauses); Date.now unless given. */
  now?: () => number
}

/**
 * `uri` with the driver's command monitoring on, from its first connection (the URI's
 * `monitorCommands` option wins over the service's own), so that watchCommands sees every command.
 */
function withCommandMonitoring (uri: string): string {
  if (/[?&]monitorCommands=/i.test(uri)) return uri
  const search = uri.indexOf('?')
  if (search >= 0) return `${uri.slice(0, search + 1)}monitorCommands=true&${uri.slice(search + 1)}`
  // The options follow the host list's slash (mongodb://host:port/?…), or the database name.
  return /^mongodb(\+srv)?:\/\/[^/]*$/.test(uri) ? `${uri}/?monitorCommands=true` : `${uri}?monitorCommands=true`
}

/**
 * The app as server.ts builds it (same server options), on a database name of its own,
 * closed and dropped when the test ends.
 */
export async function build (
  t: Test,
  { config: overrides = {}, databaseUri, extend, onRoute, logLines, now }: BuildOptions = {}
): Promise<FastifyInstance> {
  const uri = databaseUri ?? (await testDatabase()).uri
  // No metrics listener unless a test asks for one: test files run in parallel and would share its port.
  // SHIMS=none in the environment runs the whole suite on the driver's public path (.ci/run does once).
  const shims = process.env.SHIMS === undefined ? {} : { SHIMS: readConfig({ SHIMS: process.env.SHIMS }).SHIMS }
  // No load shedding unless a test asks: the app shares its event loop with the test's own work
  // (generating cases, computing expected pages), and test files run side by side.
  // No client replacement unless a test asks (test/faults/ does): the process's event loop also
  // runs the test's own work, and a stall there is not a stuck client (a test watching the
  // client's commands would lose them to its replacement).
  // No key kept in a file (CURSOR_KEY_FILE): each app signs with
  // a key of its own, as a test of a restart asks explicitly.
  const config: Config = {
    ...readConfig({}),
    ...shims,
    CURSOR_KEY_FILE: 'off',
    LOG_LEVEL: 'silent',
    METRICS_PORT: 0,
    MONGODB_URI: withCommandMonitoring(uri),
    MONGODB_DB: uniqueDatabaseName(),
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 0,
    DATABASE_STUCK_AFTER_MS: 60_000,
    ...overrides
  }
  const options = serverOptions(logLines === undefined ? config : { ...config, LOG_LEVEL: 'info' })
  // A process's first build imports the whole app while other test processes run beside it:
  // Fastify's 10 s for a plugin to start bounds a service's start, and tap's timeout a test's.
  options.pluginTimeout = 60_000
  if (logLines !== undefined) {
    options.logger = { level: 'info', stream: { write: (line: string) => { logLines.push(JSON.parse(line)) } } }
  }
  const fastify = Fastify(options)
  if (onRoute !== undefined) fastify.addHook('onRoute', onRoute)
  await fastify.register(app, now === undefined ? { config } : { config, now })
  extend?.(fastify)
  await fastify.ready()
  // The first ping, the pool's warm-up, the start-up checks and indexes run in the background:
  // done before the test, so that it starts ready and sees only its own commands.
  await fastify.database.readiness.started()
  await fastify.indexes.settled()
  t.teardown(async () => {
    // A database the test brought is the test's to clean (it may well be stopped by now).
    if (databaseUri === undefined) await fastify.database.db().dropDatabase().catch(() => {})
    await fastify.close()
  })
  return fastify
}
