import { Type, type Static } from '@sinclair/typebox'
import proxyAddr from '@fastify/proxy-addr'
import envSchema from 'env-schema'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CollationError, DEFAULT_COLLATION, parseCollation } from '../database/collation.js'
import { SHIMS, SHIMS_PATTERN } from '../database/driver-shims.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

const PositiveInteger = (defaultValue: number, maximum: number, description: string) =>
  Type.Integer({ minimum: 1, maximum, default: defaultValue, description })

/**
 * The service's configuration: environment variables only. Each variable's `description` is
 * what `npm start -- --help` prints and docs/configuration.md shows (`npm run docs` writes it).
 */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'TCP port of the API.' }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'Interface to listen on (the Docker image sets 0.0.0.0).' }),
  MONGODB_URI: Type.Optional(Type.String({ pattern: '^mongodb(\\+srv)?://', description: 'The MongoDB to serve. Unset: an embedded database with demo data (never in production: required when NODE_ENV=production).' })),
  MONGODB_DB: Type.String({ pattern: '^[^/\\\\. "$*<>:|?]{1,63}$', default: 'listing', description: 'Database name.' }),
  EMBEDDED_DATABASE: Type.Union([Type.Literal('auto'), Type.Literal('mongod'), Type.Literal('stand-in')], { default: 'auto', description: 'The database used when MONGODB_URI is unset. auto: MongoDB\'s own mongod as a one-member replica set, where it can be had (npm ci downloads it), else the offline stand-in; mongod: that replica set or no start; stand-in: the offline stand-in, with no download tried (machines without internet, CI).' }),
  DEFAULT_LIMIT: PositiveInteger(100, 100_000, '`limit` when a request gives none; at most MAX_LIMIT.'),
  MAX_LIMIT: PositiveInteger(1000, 100_000, 'Largest `limit` accepted.'),
  MAX_SKIP: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 100_000, description: 'Largest `skip` accepted.' }),
  QUERY_TIMEOUT_MS: PositiveInteger(5000, 600_000, 'Time limit of a query (sent as maxTimeMS): a slower one answers 503 QUERY_TIMEOUT. Every driver and watchdog timeout is derived from it.'),
  DATABASE_STUCK_AFTER_MS: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000, description: 'No successful ping for this long while the database accepts connections: the MongoDB client is replaced. Unset: QUERY_TIMEOUT_MS.' })),
  PROJECT_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 5000, description: 'How long a nested list remembers that its project exists (or not); 0: asked every time.' }),
  PROJECT_CACHE_MAX: PositiveInteger(10_000, 10_000_000, 'How many projects that memory holds at most.'),
  DOCUMENTS_KEPT_MB: Type.Integer({ minimum: 0, maximum: 4096, default: 16, description: 'Memory for the JSON of documents lately sent, kept beside their BSON: a document read again with the same bytes is copied rather than written again. 0: every document is written.' }),
  HEADERS_TIMEOUT_MS: PositiveInteger(10_000, 600_000, 'How long a client may take to send a request\'s head (request line and headers): a slower one is answered 408 and disconnected (slowloris). Checked every second.'),
  REQUEST_TIMEOUT_MS: PositiveInteger(10_000, 600_000, 'How long a client may take to send a whole request; at least HEADERS_TIMEOUT_MS (lists take no body, so the two are the same by default).'),
  KEEP_ALIVE_TIMEOUT_MS: PositiveInteger(72_000, 600_000, 'How long an idle kept-alive connection stays open. Keep it above the idle timeout of the proxy or load balancer in front (nginx keepalive_timeout 60 s, AWS ALB 60 s), so that they close first.'),
  SEND_TIMEOUT_MS: PositiveInteger(10_000, 600_000, 'How long a written answer may wait for its client to read it: a client that reads slower is disconnected and the answer dropped, so that it holds no memory (checked four times a second).'),
  SHUTDOWN_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 5000, description: 'After SIGTERM, /ready answers 503 and requests are still served this long, so that load balancers stop sending.' }),
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 9464, description: 'Port of the Prometheus listener (GET /metrics) on HOST, never the API\'s; 0 turns it off.' }),
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000, description: 'Event-loop delay beyond which lists and /ready answer 503 OVERLOADED. 0: never (no load shedding on this replica).' }),
  CHANGES_MAX_WAITING: Type.Integer({ minimum: 0, maximum: 100_000, default: 1000, description: 'Change-feed requests that may wait (`wait` above 0) or stream at once on one replica; beyond it, 503 OVERLOADED with Retry-After. 0: feeds answer only without waiting.' }),
  CHANGES_STREAM_SECONDS: PositiveInteger(300, 86_400, 'How long a change feed\'s stream (Accept: application/x-ndjson) stays open before it ends with a checkpoint; the client then resumes from it.'),
  CHANGES_READ_PREFERENCE: Type.Union(['primary', 'primaryPreferred', 'secondary', 'secondaryPreferred', 'nearest'].map((p) => Type.Literal(p)), { default: 'primary', description: 'Where a change feed reads the documents it sends: at majority, at or after the change (docs/changes.md). A secondary waits until it has applied the change, so each answer may take as long as its replication lag; lists keep the read preference of MONGODB_URI.' }),
  RATE_LIMIT_PER_MINUTE: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'List requests per caller and minute, per replica. Unset: no limit.' })),
  CURSOR_SECRET: Type.Optional(Type.String({ minLength: 32, description: 'Keys that sign cursors and feed tokens, comma-separated, each at least 32 bytes: the first signs, all verify. Required when NODE_ENV=production (replicas share it). Unset: the development key of CURSOR_KEY_FILE.' })),
  CURSOR_KEY_FILE: Type.Optional(Type.String({ minLength: 1, description: 'Outside production, while CURSOR_SECRET is unset: the file that keeps the key signing cursors and feed tokens (written at the first start, mode 0600), so that they survive a restart. Unset: .dev-keys/cursor-key in the project folder. off: a random key per process (cursors and tokens die with it).' })),
  AUTH_MODE: Type.Optional(Type.Union([Type.Literal('jwt'), Type.Literal('none')], { description: 'jwt: bearer tokens required; none: every caller reads every project. Unset: none, with a warning; required when NODE_ENV=production.' })),
  JWT_JWKS_URI: Type.Optional(Type.String({ pattern: '^https?://', description: 'Where the token keys are fetched (JWKS). With AUTH_MODE=jwt, this or JWT_PUBLIC_KEY is required.' })),
  JWT_PUBLIC_KEY: Type.Optional(Type.String({ minLength: 1, description: 'A PEM public key that verifies tokens (a newline may be written as the two characters \\n).' })),
  JWT_ALGORITHMS: Type.String({ pattern: '^(RS|PS|ES)(256|384|512)(,(RS|PS|ES)(256|384|512))*$|^EdDSA$', default: 'RS256,ES256', description: 'Signature algorithms accepted (never none or HS*).' }),
  JWT_ISSUER: Type.Optional(Type.String({ minLength: 1, description: 'The `iss` a token must have; required with AUTH_MODE=jwt.' })),
  JWT_AUDIENCE: Type.Optional(Type.String({ minLength: 1, description: 'The `aud` a token must name; required with AUTH_MODE=jwt.' })),
  JWT_PROJECTS_CLAIM: Type.String({ pattern: '^[A-Za-z0-9_:./-]{1,100}$', default: 'projects', description: 'The claim listing the project ids a token may read, or "*" for all.' }),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1, description: 'Which peers may set X-Forwarded-For, -Proto and -Host: true (any), a hop count, or comma-separated addresses and CIDRs. Unset: those headers are ignored.' })),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^?#]+$', description: 'The base of every absolute URL the service writes (Link headers, the OpenAPI server), whatever the request\'s headers say.' })),
  CORS_ORIGINS: Type.Optional(Type.String({ minLength: 1, description: 'Origins whose browsers may call the lists, comma-separated, or *. Unset: no CORS headers.' })),
  COLLATION: Type.String({ default: DEFAULT_COLLATION, pattern: '^\\S(?:.*\\S)?$', description: 'How strings sort and compare in every list, count, cursor and feed, and the collation the service\'s indexes are built with: a MongoDB ICU locale with its options (`fr`, `fr,numericOrdering=true`, `de@collation=phonebook,strength=2`, or the collation document as JSON), or `simple` for binary order (docs/query-language.md, "Language").' }),
  COMPRESSION: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on', description: 'on: answers of 1 KiB or more compressed as Accept-Encoding asks (zstd where the runtime has it, br, gzip); off: never (for an ingress that compresses).' }),
  DEMO_WRITES: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'off', description: 'on: with the embedded database only (no MONGODB_URI), the first demo project\'s registrations and sessions change every two seconds, so that change feeds have something to show (`npm run demo:writes`).' }),
  SHIMS: Type.String({ pattern: SHIMS_PATTERN, default: 'all', description: `Which of the service's reaches into its dependencies' internals to use (docs/architecture.md): all, none, or some of ${SHIMS.join(', ')}, comma-separated. Each is also off when its check at start fails (for the driver: when the installed driver is not the version it was checked with). none: public APIs only.` }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info', description: 'Least severe log level written; one line per request only at debug and trace.' })
})

/** What a pattern-checked variable takes, in words (the rest is said by the schema itself). */
const PATTERN_WORDS: Record<string, string> = {
  MONGODB_URI: 'a mongodb:// or mongodb+srv:// connection string',
  MONGODB_DB: '1 to 63 characters, none of / \\ . space " $ * < > : | ?',
  JWT_JWKS_URI: 'an http:// or https:// URL',
  JWT_ALGORITHMS: 'RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, comma-separated; or EdDSA alone',
  JWT_PROJECTS_CLAIM: '1 to 100 of A-Z a-z 0-9 _ : . / -',
  PUBLIC_URL: 'an http:// or https:// URL without query or fragment',
  SHIMS: `all, none, or some of ${SHIMS.join(', ')}, comma-separated`,
  COLLATION: 'simple, or a MongoDB locale (fr, fr_CA, en, de@collation=phonebook…) with ,option=value pairs (strength 1–5, caseLevel, caseFirst upper/lower/off, numericOrdering, alternate non-ignorable/shifted, maxVariable punct/space, backwards, normalization), or that collation document as JSON'
}

/** Variables read outside the schema, for the reference and `--help`. */
export const OTHER_VARIABLES = [
  { name: 'NODE_ENV', description: 'production: MONGODB_URI, CURSOR_SECRET and AUTH_MODE are required, and logs are JSON even on a terminal.' },
  { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', description: 'An OTLP/HTTP collector: turns tracing on. The other standard OTEL_* variables apply (OTEL_SDK_DISABLED=true turns it off).' }
] as const

interface SchemaLike { type?: string, minimum?: number, maximum?: number, minLength?: number, pattern?: string, anyOf?: Array<{ const?: unknown }>, default?: unknown, description?: string }

/** The values a variable takes, in words. */
export function allowedValues (name: string): string {
  const schema = (ConfigSchema.properties as Record<string, SchemaLike>)[name]
  if (schema === undefined) throw new Error(`no configuration variable ${name}`)
  if (schema.anyOf !== undefined) return `one of ${schema.anyOf.map((item) => String(item.const)).join(', ')}`
  if (schema.type === 'integer') return `a whole number from ${schema.minimum ?? '…'} to ${schema.maximum ?? '…'}`
  if (schema.pattern !== undefined) {
    const words = PATTERN_WORDS[name]
    if (words === undefined) throw new Error(`configuration variable ${name} has a pattern but no words for it`)
    return words
  }
  return schema.minLength !== undefined && schema.minLength > 1 ? `text of at least ${schema.minLength} characters` : 'text'
}

export interface VariableReference { name: string, default: string | undefined, allowed: string, description: string }

/** Every variable of the schema with its default, allowed values and meaning, in the schema's order. */
export function configReference (): VariableReference[] {
  return Object.entries(ConfigSchema.properties as Record<string, SchemaLike>).map(([name, schema]) => ({
    name,
    default: schema.default === undefined ? undefined : String(schema.default),
    allowed: allowedValues(name),
    description: schema.description ?? ''
  }))
}

/** The text of `npm start -- --help`. */
export function configHelp (): string {
  const lines = ['npm start [-- --help]', '', 'Serves the list API. Configured by environment variables only:', '']
  for (const v of configReference()) {
    lines.push(`  ${v.name}${v.default === undefined ? '' : `=${v.default}`}`, `      ${v.description}`, `      Takes ${v.allowed}.`)
  }
  for (const v of OTHER_VARIABLES) lines.push(`  ${v.name}`, `      ${v.description}`)
  lines.push('', 'Without MONGODB_URI the service runs on an embedded database loaded with demo data (EMBEDDED_DATABASE says which).')
  return lines.join('\n')
}

// Values not repeated in error messages: they may hold a password or a key.
const SECRET = new Set(['MONGODB_URI', 'CURSOR_SECRET', 'JWT_PUBLIC_KEY'])

/** One message per variable at fault: its name, its value (unless secret) and what it takes. */
function invalidVariables (names: string[], data: Record<string, unknown>): string {
  return [...new Set(names)].map((name) => `${SECRET.has(name) ? `${name} (value not shown)` : `${name}=${JSON.stringify(data[name])}`} is not allowed: ${name} takes ${allowedValues(name)}`).join('; ')
}

export type Config = Static<typeof ConfigSchema>

export class ConfigError extends Error {
  constructor (message: string) {
    super(`Invalid configuration: ${message}`)
    this.name = 'ConfigError'
  }
}

/** Which peers' X-Forwarded-* headers count, as Fastify's `trustProxy` option; false when unset. */
export type TrustProxy = boolean | string | ((address: string, hop: number) => boolean)

/**
 * TRUST_PROXY read into Fastify's `trustProxy`. A hop count trusts that many peers nearest the
 * service, whoever they are (as proxy-addr counts hops): Fastify 5 refuses to trust anything
 * for a bare number, so the count is given as a function.
 */
export function trustProxy (text: string | undefined): TrustProxy {
  if (text === undefined || text === 'false') return false
  if (text === 'true') return true
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    if (hops < 1 || hops > 100) throw new ConfigError(`TRUST_PROXY=${text}: a hop count is from 1 to 100`)
    return (_address, hop) => hop < hops
  }
  const list = text.split(',').map((item) => item.trim())
  try {
    proxyAddr.compile(list)
  } catch (error) {
    throw new ConfigError(`TRUST_PROXY: ${(error as Error).message}; write true, a hop count, or comma-separated addresses and CIDRs (10.0.0.0/8, 127.0.0.1)`)
  }
  return list.join(',')
}

/** PUBLIC_URL without a trailing slash: the request's path is appended to it. */
function publicUrl (text: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ConfigError(`PUBLIC_URL=${text} is not a URL`)
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') throw new ConfigError('PUBLIC_URL is a scheme, a host and an optional path: no query, fragment or credentials')
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/** CORS_ORIGINS: `*`, or origins (scheme://host[:port]) separated by commas. */
export function corsOrigins (text: string): '*' | string[] {
  if (text.trim() === '*') return '*'
  return text.split(',').map((item) => {
    const origin = item.trim()
    let parsed: URL | undefined
    try { parsed = new URL(origin) } catch {}
    if (parsed === undefined || parsed.origin !== origin) throw new ConfigError(`CORS_ORIGINS: '${origin}' is not an origin (scheme://host[:port], without a path or a trailing slash)`)
    return origin
  })
}

/** The environment's values for the schema's variables (unset and empty ones left out). */
function schemaData (env: NodeJS.ProcessEnv): Record<string, unknown> {
  return Object.fromEntries(Object.keys(ConfigSchema.properties).filter((key) => env[key] !== undefined && env[key] !== '').map((key) => [key, env[key]]))
}

/**
 * The schema's reading of `data`, and its problems: a variable the schema refuses is named
 * (with what it takes) and then read as unset, so that the checks that follow still run on
 * the others.
 */
function parseSchema (data: Record<string, unknown>): { config: Config, problems: string[] } {
  try {
    return { config: envSchema<Config>({ schema: ConfigSchema, data, env: false, dotenv: false }), problems: [] }
  } catch (error) {
    // Ajv reports each branch of a union and each keyword; what matters is which variables.
    const errors = (error as { errors?: Array<{ instancePath: string }> }).errors ?? []
    const names = [...new Set(errors.map((e) => e.instancePath.split('/')[1] ?? '').filter((name) => name in ConfigSchema.properties))]
    if (names.length === 0) throw new ConfigError((error as Error).message.replaceAll('env/', ''))
    const rest = Object.fromEntries(Object.entries(data).filter(([name]) => !names.includes(name)))
    return { config: envSchema<Config>({ schema: ConfigSchema, data: rest, env: false, dotenv: false }), problems: [invalidVariables(names, data)] }
  }
}

/** Runs a check that throws a ConfigError, and keeps its message as a problem. */
function collect (problems: string[], check: () => void): void {
  try {
    check()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    problems.push(error.message.replace(/^Invalid configuration: /, ''))
  }
}

/**
 * Reads and checks the environment. Every problem is found before any is reported, and all of
 * them are in the one message, each naming its variable: an operator learns them in one start.
 */
export function readConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const data = schemaData(env)
  const { config, problems } = parseSchema(data)
  // Required in production, unless given (a value given but refused is named once, above).
  const missing = (name: string): boolean => env.NODE_ENV === 'production' && !(name in data)
  const secrets = config.CURSOR_SECRET?.split(',')
  if (secrets?.some((secret) => Buffer.byteLength(secret) < 32) === true) {
    problems.push('CURSOR_SECRET holds a key shorter than 32 bytes (keys are comma-separated)')
  }
  if (missing('MONGODB_URI')) {
    problems.push('MONGODB_URI is required when NODE_ENV=production: the embedded databases are for development, demos and tests only')
  }
  if (missing('CURSOR_SECRET')) {
    problems.push('CURSOR_SECRET is required when NODE_ENV=production: replicas must sign cursors with the same key')
  }
  if (missing('AUTH_MODE')) {
    problems.push('AUTH_MODE is required when NODE_ENV=production: jwt, or none to let every caller read every project')
  }
  if (config.AUTH_MODE === 'jwt') {
    for (const name of ['JWT_ISSUER', 'JWT_AUDIENCE'] as const) {
      if (config[name] === undefined) problems.push(`${name} is required when AUTH_MODE=jwt`)
    }
    if (config.JWT_JWKS_URI === undefined && config.JWT_PUBLIC_KEY === undefined) {
      problems.push('JWT_JWKS_URI or JWT_PUBLIC_KEY is required when AUTH_MODE=jwt')
    }
  }
  const { TRUST_PROXY, PUBLIC_URL, CORS_ORIGINS } = config
  if (TRUST_PROXY !== undefined) collect(problems, () => trustProxy(TRUST_PROXY))
  if (PUBLIC_URL !== undefined) collect(problems, () => { config.PUBLIC_URL = publicUrl(PUBLIC_URL) })
  if (CORS_ORIGINS !== undefined) collect(problems, () => corsOrigins(CORS_ORIGINS))
  collect(problems, () => {
    try {
      parseCollation(config.COLLATION)
    } catch (error) {
      throw error instanceof CollationError ? new ConfigError(error.message) : error
    }
  })
  if (config.HEADERS_TIMEOUT_MS > config.REQUEST_TIMEOUT_MS) {
    problems.push(`HEADERS_TIMEOUT_MS (${config.HEADERS_TIMEOUT_MS}) must not exceed REQUEST_TIMEOUT_MS (${config.REQUEST_TIMEOUT_MS}): the head is part of the request`)
  }
  if (config.DEFAULT_LIMIT > config.MAX_LIMIT) {
    problems.push(`DEFAULT_LIMIT (${config.DEFAULT_LIMIT}) must not exceed MAX_LIMIT (${config.MAX_LIMIT})`)
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '))
  return config
}

/** A listener that cannot open its port, as one line naming the variable (process/service.ts prints it and exits 1). */
export function listenError (variable: 'PORT' | 'METRICS_PORT', port: number, host: string, error: NodeJS.ErrnoException, hint = ''): Error {
  const why = error.code === 'EADDRINUSE'
    ? 'is already in use (another instance of the service, or another program)'
    : error.code === 'EACCES' ? 'may not be opened by this user' : `cannot be opened (${error.code ?? error.message})`
  return new ConfigError(`${variable}=${port} ${why} on ${host}; set ${variable} to a free port${hint}`)
}

export interface ConfigPluginOptions {
  /** A configuration already read (server.ts, tests); else the environment is read here. */
  config?: Config
}

async function configPlugin (fastify: FastifyInstance, opts: ConfigPluginOptions) {
  fastify.decorate('config', opts.config ?? readConfig())
}

export default fp(configPlugin, { name: 'config' })
