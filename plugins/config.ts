import proxyAddr from '@fastify/proxy-addr'
import envSchema from 'env-schema'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CollationError, parseCollation } from '../database/collation.js'
import { allowedValues, ConfigSchema, type Config } from '../schemas/config.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

// Values not repeated in error messages: they may hold a password or a key.
const SECRET = new Set(['MONGODB_URI', 'CURSOR_SECRET', 'JWT_PUBLIC_KEY'])

/** One message per variable at fault: its name, its value (unless secret) and what it takes. */
function invalidVariables (names: string[], data: Record<string, unknown>): string {
  return [...new Set(names)].map((name) => {
    const given = SECRET.has(name) ? `${name} (value not shown)` : `${name}=${JSON.stringify(data[name])}`
    return `${given} is not allowed: ${name} takes ${allowedValues(name)}`
  }).join('; ')
}

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
    throw new ConfigError(`TRUST_PROXY: ${(error as Error).message}; write true, a hop count, ` +
      'or comma-separated addresses and CIDRs (10.0.0.0/8, 127.0.0.1)')
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
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigError('PUBLIC_URL is a scheme, a host and an optional path: no query, fragment or credentials')
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

/** CORS_ORIGINS: `*`, or origins (scheme://host[:port]) separated by commas. */
export function corsOrigins (text: string): '*' | string[] {
  if (text.trim() === '*') return '*'
  return text.split(',').map((item) => {
    const origin = item.trim()
    let parsed: URL | undefined
    try { parsed = new URL(origin) } catch {}
    if (parsed === undefined || parsed.origin !== origin) {
      throw new ConfigError(
        `CORS_ORIGINS: '${origin}' is not an origin (scheme://host[:port], without a path or a trailing slash)`)
    }
    return origin
  })
}

/** The environment's values for the schema's variables (unset and empty ones left out). */
function schemaData (env: NodeJS.ProcessEnv): Record<string, unknown> {
  return Object.fromEntries(Object.keys(ConfigSchema.properties)
    .filter((key) => env[key] !== undefined && env[key] !== '')
    .map((key) => [key, env[key]]))
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
    const names = [...new Set(errors.map((e) => e.instancePath.split('/')[1] ?? ''))]
      .filter((name) => name in ConfigSchema.properties)
    if (names.length === 0) throw new ConfigError((error as Error).message.replaceAll('env/', ''))
    const rest = Object.fromEntries(Object.entries(data).filter(([name]) => !names.includes(name)))
    return {
      config: envSchema<Config>({ schema: ConfigSchema, data: rest, env: false, dotenv: false }),
      problems: [invalidVariables(names, data)]
    }
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
    problems.push('MONGODB_URI is required when NODE_ENV=production: ' +
      'the embedded databases are for development, demos and tests only')
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
    problems.push(`HEADERS_TIMEOUT_MS (${config.HEADERS_TIMEOUT_MS}) must not exceed ` +
      `REQUEST_TIMEOUT_MS (${config.REQUEST_TIMEOUT_MS}): the head is part of the request`)
  }
  if (config.DEFAULT_LIMIT > config.MAX_LIMIT) {
    problems.push(`DEFAULT_LIMIT (${config.DEFAULT_LIMIT}) must not exceed MAX_LIMIT (${config.MAX_LIMIT})`)
  }
  if (problems.length > 0) throw new ConfigError(problems.join('; '))
  return config
}

/** A listener that cannot open its port, as one line naming the variable (process/service.ts prints it and exits 1). */
export function listenError (
  variable: 'PORT' | 'METRICS_PORT',
  port: number,
  host: string,
  error: NodeJS.ErrnoException,
  hint = ''
): Error {
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
