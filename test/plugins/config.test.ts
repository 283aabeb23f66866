import { spawnSync } from 'node:child_process'
import t from 'tap'
import { ConfigError, readConfig } from '../../plugins/config.js'

t.test('defaults are those of the README configuration table', async (t) => {
  t.same(readConfig({}), {
    PORT: 3000, HOST: '127.0.0.1', MONGODB_DB: 'listing', DEFAULT_LIMIT: 100, MAX_LIMIT: 1000, MAX_SKIP: 100000, QUERY_TIMEOUT_MS: 5000, LOG_LEVEL: 'info', SHUTDOWN_DELAY_MS: 5000, JWT_ALGORITHMS: 'RS256,ES256', JWT_PROJECTS_CLAIM: 'projects', METRICS_PORT: 9464, OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 1000, PROJECT_CACHE_TTL_MS: 5000, PROJECT_CACHE_MAX: 10000, COMPRESSION: 'on'
  })
})

t.test('optional features are off unless asked for', async (t) => {
  const config = readConfig({})
  for (const name of ['RATE_LIMIT_PER_MINUTE', 'AUTH_MODE', 'CURSOR_SECRET', 'JWT_JWKS_URI', 'JWT_PUBLIC_KEY'] as const) t.equal(config[name], undefined, name)
})

t.test('values are read from the environment', async (t) => {
  const config = readConfig({ PORT: '8080', HOST: '0.0.0.0', MONGODB_URI: 'mongodb://db:27017', MAX_LIMIT: '50', DEFAULT_LIMIT: '20', LOG_LEVEL: 'warn' })
  t.equal(config.PORT, 8080)
  t.equal(config.HOST, '0.0.0.0')
  t.equal(config.MONGODB_URI, 'mongodb://db:27017')
  t.equal(config.DEFAULT_LIMIT, 20)
  t.equal(config.LOG_LEVEL, 'warn')
})

const bad: Array<[Record<string, string>, string]> = [
  [{ PORT: 'abc' }, 'PORT'],
  [{ PORT: '70000' }, 'PORT'],
  [{ PORT: '80.5' }, 'PORT'],
  [{ MONGODB_URI: 'http://example.org' }, 'MONGODB_URI'],
  [{ MONGODB_DB: 'bad/name' }, 'MONGODB_DB'],
  [{ DEFAULT_LIMIT: '0' }, 'DEFAULT_LIMIT'],
  [{ MAX_LIMIT: 'many' }, 'MAX_LIMIT'],
  [{ DEFAULT_LIMIT: '2000' }, 'DEFAULT_LIMIT'],
  [{ MAX_SKIP: '-1' }, 'MAX_SKIP'],
  [{ QUERY_TIMEOUT_MS: '0' }, 'QUERY_TIMEOUT_MS'],
  [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
  [{ CURSOR_SECRET: 'short' }, 'CURSOR_SECRET'],
  [{ CURSOR_SECRET: `${'k'.repeat(32)},short` }, 'CURSOR_SECRET'],
  [{ NODE_ENV: 'production', MONGODB_URI: 'mongodb://db:27017', AUTH_MODE: 'none' }, 'CURSOR_SECRET'],
  [{ NODE_ENV: 'production', MONGODB_URI: 'mongodb://db:27017', CURSOR_SECRET: 'k'.repeat(32) }, 'AUTH_MODE'],
  [{ AUTH_MODE: 'jwt', JWT_AUDIENCE: 'a', JWT_PUBLIC_KEY: 'pem' }, 'JWT_ISSUER'],
  [{ AUTH_MODE: 'jwt', JWT_ISSUER: 'i', JWT_PUBLIC_KEY: 'pem' }, 'JWT_AUDIENCE'],
  [{ AUTH_MODE: 'jwt', JWT_ISSUER: 'i', JWT_AUDIENCE: 'a' }, 'JWT_JWKS_URI'],
  [{ AUTH_MODE: 'maybe' }, 'AUTH_MODE'],
  [{ JWT_ALGORITHMS: 'RS256,none' }, 'JWT_ALGORITHMS'],
  [{ JWT_ALGORITHMS: 'HS256' }, 'JWT_ALGORITHMS'],
  [{ JWT_JWKS_URI: 'file:///etc/keys' }, 'JWT_JWKS_URI'],
  [{ SHUTDOWN_DELAY_MS: '-5' }, 'SHUTDOWN_DELAY_MS'],
  [{ DATABASE_STUCK_AFTER_MS: '0' }, 'DATABASE_STUCK_AFTER_MS']
]
for (const [env, variable] of bad) {
  t.test(`${JSON.stringify(env)} is refused, naming ${variable}`, async (t) => {
    const error = (() => { try { readConfig(env) } catch (e) { return e } })()
    t.ok(error instanceof ConfigError, 'a ConfigError')
    t.match((error as Error).message, variable)
  })
}

const runServer = (env: Record<string, string>) => spawnSync(process.execPath, ['--import=tsx', 'server.ts'], {
  env: { PATH: process.env.PATH, METRICS_PORT: '0', ...env }, encoding: 'utf8', timeout: 30_000
})

t.test('the server stops at start-up on a bad value, naming the variable', async (t) => {
  const run = runServer({ PORT: 'abc' })
  t.equal(run.status, 1)
  t.match(run.stderr, /Invalid configuration: .*PORT/)
})

t.test('production without MONGODB_URI refuses to start', async (t) => {
  const run = runServer({ NODE_ENV: 'production', LOG_LEVEL: 'fatal', CURSOR_SECRET: 'k'.repeat(32), AUTH_MODE: 'none' })
  t.equal(run.status, 1)
  t.match(run.stdout + run.stderr, /MONGODB_URI is required when NODE_ENV=production/)
})
