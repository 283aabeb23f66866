import { Type, type Static } from '@sinclair/typebox'
import proxyAddr from '@fastify/proxy-addr'
import envSchema from 'env-schema'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

const PositiveInteger = (defaultValue: number, maximum = Number.MAX_SAFE_INTEGER) =>
  Type.Integer({ minimum: 1, maximum, default: defaultValue })

/** The service's configuration: environment variables only (README "Configuration"). */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  MONGODB_URI: Type.Optional(Type.String({ pattern: '^mongodb(\\+srv)?://' })),
  MONGODB_DB: Type.String({ pattern: '^[^/\\\\. "$*<>:|?]{1,63}$', default: 'listing' }),
  DEFAULT_LIMIT: PositiveInteger(100),
  MAX_LIMIT: PositiveInteger(1000, 100_000),
  MAX_SKIP: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 100_000 }),
  QUERY_TIMEOUT_MS: PositiveInteger(5000, 600_000),
  /** No successful ping for this long while the database accepts connections: the client is replaced (unset: QUERY_TIMEOUT_MS). */
  DATABASE_STUCK_AFTER_MS: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  /** How long a project's existence (or absence) is remembered by the nested lists; 0: asked every time. */
  PROJECT_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 5000 }),
  /** How many projects that memory holds at most. */
  PROJECT_CACHE_MAX: PositiveInteger(10_000, 10_000_000),
  /** After SIGTERM, /ready is 503 and requests are still served this long, so that load balancers stop sending. */
  SHUTDOWN_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 5000 }),
  /** The Prometheus listener's port (GET /metrics), never the public one; 0 turns it off. */
  METRICS_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 9464 }),
  /** Event-loop delay beyond which lists and /ready answer 503 OVERLOADED (README "Operating it"). */
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: PositiveInteger(1000, 60_000),
  /** List requests per caller and minute, per replica; unset: no limit. */
  RATE_LIMIT_PER_MINUTE: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  /** Keys that sign cursors, comma-separated (the first signs, all verify); each at least 32 bytes. */
  CURSOR_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  /** `jwt`: bearer tokens required (README "Access control"); `none`: every caller reads every project. */
  AUTH_MODE: Type.Optional(Type.Union([Type.Literal('jwt'), Type.Literal('none')])),
  JWT_JWKS_URI: Type.Optional(Type.String({ pattern: '^https?://' })),
  /** A PEM public key (`\n` may be written as the two characters backslash and n). */
  JWT_PUBLIC_KEY: Type.Optional(Type.String({ minLength: 1 })),
  JWT_ALGORITHMS: Type.String({ pattern: '^(RS|PS|ES)(256|384|512)(,(RS|PS|ES)(256|384|512))*$|^EdDSA$', default: 'RS256,ES256' }),
  JWT_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  JWT_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  JWT_PROJECTS_CLAIM: Type.String({ pattern: '^[A-Za-z0-9_:./-]{1,100}$', default: 'projects' }),
  /** Which peers may set X-Forwarded-For/-Proto/-Host: `true`, a hop count, or comma-separated addresses/CIDRs; unset: none. */
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1 })),
  /** The base of every absolute URL the service writes (Link), whatever the request's headers say. */
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^?#]+$' })),
  /** Origins whose browsers may call the service (CORS): comma-separated, or `*`; unset: no CORS headers. */
  CORS_ORIGINS: Type.Optional(Type.String({ minLength: 1 })),
  /** `on`: answers of 1 KiB or more compressed as Accept-Encoding asks (zstd, br, gzip); `off`: never. */
  COMPRESSION: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' })
})

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

/** Reads and checks the environment; every message names the variable at fault. */
export function readConfig (env: NodeJS.ProcessEnv = process.env): Config {
  const data = Object.fromEntries(Object.keys(ConfigSchema.properties).filter((key) => env[key] !== undefined && env[key] !== '').map((key) => [key, env[key]]))
  let config: Config
  try {
    config = envSchema<Config>({ schema: ConfigSchema, data, env: false, dotenv: false })
  } catch (error) {
    // env-schema reports "env/PORT must be integer"; the variable is the part that matters.
    throw new ConfigError((error as Error).message.replaceAll('env/', ''))
  }
  const secrets = config.CURSOR_SECRET?.split(',')
  if (secrets?.some((secret) => Buffer.byteLength(secret) < 32) === true) {
    throw new ConfigError('CURSOR_SECRET holds a key shorter than 32 bytes (keys are comma-separated)')
  }
  if (secrets === undefined && env.NODE_ENV === 'production') {
    throw new ConfigError('CURSOR_SECRET is required when NODE_ENV=production: replicas must sign cursors with the same key')
  }
  if (config.AUTH_MODE === undefined && env.NODE_ENV === 'production') {
    throw new ConfigError('AUTH_MODE is required when NODE_ENV=production: jwt, or none to let every caller read every project')
  }
  if (config.AUTH_MODE === 'jwt') {
    for (const name of ['JWT_ISSUER', 'JWT_AUDIENCE'] as const) {
      if (config[name] === undefined) throw new ConfigError(`${name} is required when AUTH_MODE=jwt`)
    }
    if (config.JWT_JWKS_URI === undefined && config.JWT_PUBLIC_KEY === undefined) {
      throw new ConfigError('JWT_JWKS_URI or JWT_PUBLIC_KEY is required when AUTH_MODE=jwt')
    }
  }
  if (config.TRUST_PROXY !== undefined) trustProxy(config.TRUST_PROXY)
  if (config.PUBLIC_URL !== undefined) config.PUBLIC_URL = publicUrl(config.PUBLIC_URL)
  if (config.CORS_ORIGINS !== undefined) corsOrigins(config.CORS_ORIGINS)
  if (config.DEFAULT_LIMIT > config.MAX_LIMIT) {
    throw new ConfigError(`DEFAULT_LIMIT (${config.DEFAULT_LIMIT}) must not exceed MAX_LIMIT (${config.MAX_LIMIT})`)
  }
  return config
}

/** A listener that cannot open its port, as one line naming the variable (service.ts prints it and exits 1). */
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
