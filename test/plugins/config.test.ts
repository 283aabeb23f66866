import { spawnSync } from 'node:child_process'
import t from 'tap'
import { ConfigError, readConfig } from '../../plugins/config.js'
import { ConfigSchema, configReference } from '../../schemas/config.js'
import { NODE, nodeArgs } from '../helpers/node-child.js'

t.test('defaults are those of the configuration reference (docs/configuration.md)', async (t) => {
  t.same(readConfig({}), {
    PORT: 3000,
    HOST: '127.0.0.1',
    MONGODB_DB: 'listing',
    EMBEDDED_DATABASE: 'auto',
    DEFAULT_LIMIT: 100,
    MAX_LIMIT: 1000,
    MAX_SKIP: 100000,
    QUERY_TIMEOUT_MS: 5000,
    LOG_LEVEL: 'info',
    SHUTDOWN_DELAY_MS: 5000,
    JWT_ALGORITHMS: 'RS256,ES256',
    JWT_PROJECTS_CLAIM: 'projects',
    METRICS_PORT: 9464,
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 1000,
    PROJECT_CACHE_TTL_MS: 5000,
    PROJECT_CACHE_MAX: 10000,
    DOCUMENTS_KEPT_MB: 16,
    COMPRESSION: 'on',
    HEADERS_TIMEOUT_MS: 10000,
    REQUEST_TIMEOUT_MS: 10000,
    KEEP_ALIVE_TIMEOUT_MS: 72000,
    SEND_TIMEOUT_MS: 10000,
    CHANGES_MAX_WAITING: 1000,
    CHANGES_STREAM_SECONDS: 300,
    CHANGES_READ_PREFERENCE: 'primary',
    DEMO_WRITES: 'off',
    SHIMS: 'all',
    COLLATION: 'fr'
  })
})

t.test('optional features are off unless asked for', async (t) => {
  const config = readConfig({})
  for (const name of [
    'RATE_LIMIT_PER_MINUTE', 'AUTH_MODE', 'CURSOR_SECRET', 'JWT_JWKS_URI', 'JWT_PUBLIC_KEY'
  ] as const) t.equal(config[name], undefined, name)
})

t.test('values are read from the environment', async (t) => {
  const config = readConfig({
    PORT: '8080',
    HOST: '0.0.0.0',
    MONGODB_URI: 'mongodb://db:27017',
    MAX_LIMIT: '50',
    DEFAULT_LIMIT: '20',
    LOG_LEVEL: 'warn'
  })
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
  [{ EMBEDDED_DATABASE: 'docker' }, 'EMBEDDED_DATABASE'],
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
  [{ DATABASE_STUCK_AFTER_MS: '0' }, 'DATABASE_STUCK_AFTER_MS'],
  [{ COLLATION: 'xx' }, 'COLLATION'],
  [{ COLLATION: 'fr,strength=6' }, 'COLLATION'],
  [{ COLLATION: '{"locale":"fr","strenght":2}' }, 'COLLATION']
]
for (const [env, variable] of bad) {
  t.test(`${JSON.stringify(env)} is refused, naming ${variable}`, async (t) => {
    const error = (() => { try { readConfig(env) } catch (e) { return e } })()
    t.ok(error instanceof ConfigError, 'a ConfigError')
    t.match((error as Error).message, variable)
  })
}

const refusal = (env: Record<string, string>): string => {
  try { readConfig(env) } catch (error) { return (error as Error).message }
  throw new Error('accepted')
}

t.test('a bad value is named once, with the value and what the variable takes', async (t) => {
  const message = refusal({ LOG_LEVEL: 'verbose', PORT: '80.5' })
  t.equal(message.match(/LOG_LEVEL/g)?.length, 2, 'LOG_LEVEL said once (name=value, then what it takes)')
  t.match(message,
    'LOG_LEVEL="verbose" is not allowed: LOG_LEVEL takes one of fatal, error, warn, info, debug, trace, silent')
  t.match(message, 'PORT="80.5" is not allowed: PORT takes a whole number from 0 to 65535')
  t.notMatch(message, /must be equal to constant|must match/, 'no validator wording')
})

t.test('every problem is in the one message, so that one start tells them all', async (t) => {
  const message = refusal({
    NODE_ENV: 'production',
    PORT: 'abc',
    AUTH_MODE: 'maybe',
    PUBLIC_URL: 'https://user:pw@api.example.org',
    CORS_ORIGINS: 'https://a.example/path',
    DEFAULT_LIMIT: '5000'
  })
  for (const [name, because] of [
    ['PORT', 'PORT="abc" is not allowed'], ['AUTH_MODE', 'AUTH_MODE="maybe" is not allowed'],
    ['MONGODB_URI', 'MONGODB_URI is required when NODE_ENV=production'],
    ['CURSOR_SECRET', 'CURSOR_SECRET is required when NODE_ENV=production'],
    ['PUBLIC_URL', 'PUBLIC_URL is a scheme'], ['CORS_ORIGINS', 'CORS_ORIGINS:'],
    ['DEFAULT_LIMIT', 'DEFAULT_LIMIT (5000) must not exceed MAX_LIMIT (1000)']
  ] as const) {
    t.match(message, because, name)
  }
  t.notMatch(message, 'AUTH_MODE is required', 'a value given but refused is named once, as refused')
  t.equal(message.match(/Invalid configuration/g)?.length, 1, 'one message')
})

t.test('values that may hold a password or a key are not repeated in the message', async (t) => {
  const uri = refusal({ MONGODB_URI: 'http://admin:hunter2@db' })
  t.notMatch(uri, 'hunter2')
  t.match(uri,
    'MONGODB_URI (value not shown) is not allowed: MONGODB_URI takes a mongodb:// or mongodb+srv:// connection string')
  t.notMatch(refusal({ CURSOR_SECRET: 'too-short-secret' }), 'too-short-secret')
})

t.test('every variable has a meaning and words for what it takes', async (t) => {
  const reference = configReference()
  t.same(reference.map((v) => v.name), Object.keys(ConfigSchema.properties))
  for (const v of reference) {
    t.ok(v.description.length > 10, `${v.name} has a description`)
    t.ok(v.allowed.length > 3, `${v.name}: ${v.allowed}`)
  }
})

const runServer = (env: Record<string, string>) => spawnSync(NODE, nodeArgs(['--import=tsx', 'server.ts']), {
  env: { PATH: process.env.PATH, METRICS_PORT: '0', ...env }, encoding: 'utf8', timeout: 30_000
})

t.test('the server stops at start-up on a bad value, naming the variable', async (t) => {
  const run = runServer({ PORT: 'abc' })
  t.equal(run.status, 1)
  t.match(run.stderr, /Invalid configuration: .*PORT/)
})

t.test('production without MONGODB_URI refuses to start', async (t) => {
  const run = runServer({
    NODE_ENV: 'production', LOG_LEVEL: 'fatal', CURSOR_SECRET: 'k'.repeat(32), AUTH_MODE: 'none'
  })
  t.equal(run.status, 1)
  t.match(run.stdout + run.stderr, /MONGODB_URI is required when NODE_ENV=production/)
})

t.test('production with the three required variables missing: one start names all three, in one line', async (t) => {
  const run = runServer({ NODE_ENV: 'production' })
  t.equal(run.status, 1)
  const lines = run.stderr.trim().split('\n')
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], /^Invalid configuration: /)
  for (const name of ['MONGODB_URI', 'CURSOR_SECRET', 'AUTH_MODE']) {
    t.match(lines[0], `${name} is required when NODE_ENV=production`, name)
  }
  t.equal(run.stdout, '', 'nothing else printed')
})

t.test('npm start -- --help prints every variable and exits without starting', async (t) => {
  const run = spawnSync(NODE, nodeArgs(['--import=tsx', 'server.ts', '--help']),
    { env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 30_000 })
  t.equal(run.status, 0)
  for (const name of Object.keys(ConfigSchema.properties)) t.match(run.stdout, new RegExp(`^  ${name}\\b`, 'm'), name)
  t.notMatch(run.stdout, /listening/i, 'nothing started')
  const wrong = spawnSync(NODE, nodeArgs(['--import=tsx', 'server.ts', '--port', '1']),
    { env: { PATH: process.env.PATH }, encoding: 'utf8', timeout: 30_000 })
  t.equal(wrong.status, 2, 'an unknown option is a usage error')
  t.match(wrong.stderr, /Unknown option '--port'/)
})
