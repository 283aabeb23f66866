// The service's configuration variables: each declared once, with its default, its allowed
// values and its meaning, which `npm start -- --help` prints and docs/configuration.md shows
// (`npm run docs` writes it). plugins/config.ts reads the environment with this schema.
import { Type, type Static } from '@sinclair/typebox'

/** The reaches into dependencies' internals that SHIMS switches (database/driver-shims.ts). */
export const SHIMS = ['slot-sessions'] as const
/** What SHIMS takes: all, none, or shim names, comma-separated. */
export const SHIMS_PATTERN = `^(all|none|(${SHIMS.join('|')})(,(${SHIMS.join('|')}))*)$`

/** The default: French as MongoDB's ICU has it, at strength 3 (case and accents order ties). */
export const DEFAULT_COLLATION = 'fr'

const PositiveInteger = (defaultValue: number, maximum: number, description: string) =>
  Type.Integer({ minimum: 1, maximum, default: defaultValue, description })
const Integer = (minimum: number, maximum: number, defaultValue: number, description: string) =>
  Type.Integer({ minimum, maximum, default: defaultValue, description })
const OnOff = (defaultValue: 'on' | 'off', description: string) =>
  Type.Union([Type.Literal('on'), Type.Literal('off')], { default: defaultValue, description })

export const ConfigSchema = Type.Object({
  PORT: Integer(0, 65535, 3000, 'TCP port of the API.'),
  HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'Interface to listen on (the Docker image sets 0.0.0.0).'
  }),
  MONGODB_URI: Type.Optional(Type.String({
    pattern: '^mongodb(\\+srv)?://',
    description: 'The MongoDB to serve. Unset: an embedded database with demo data ' +
      '(never in production: required when NODE_ENV=production).'
  })),
  MONGODB_DB: Type.String({ pattern: '^[^/\\\\. "$*<>:|?]{1,63}$', default: 'listing', description: 'Database name.' }),
  EMBEDDED_DATABASE: Type.Union([Type.Literal('auto'), Type.Literal('mongod'), Type.Literal('stand-in')], {
    default: 'auto',
    description: 'The database used when MONGODB_URI is unset. auto: MongoDB\'s own mongod as a one-member replica ' +
      'set, where it can be had (npm ci downloads it), else the offline stand-in; mongod: that replica set or no ' +
      'start; stand-in: the offline stand-in, with no download tried (machines without internet, CI).'
  }),
  DEFAULT_LIMIT: PositiveInteger(100, 100_000, '`limit` when a request gives none; at most MAX_LIMIT.'),
  MAX_LIMIT: PositiveInteger(1000, 100_000, 'Largest `limit` accepted.'),
  MAX_SKIP: Integer(0, 10_000_000, 100_000, 'Largest `skip` accepted.'),
  QUERY_TIMEOUT_MS: PositiveInteger(5000, 600_000, 'Time limit of a query (sent as maxTimeMS): a slower one ' +
    'answers 503 QUERY_TIMEOUT. Every driver and watchdog timeout is derived from it.'),
  DATABASE_STUCK_AFTER_MS: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 600_000,
    description: 'No successful ping for this long while the database accepts connections and the client\'s ' +
      'heartbeats go unanswered: the MongoDB client is replaced. Unset: QUERY_TIMEOUT_MS.'
  })),
  PROJECT_CACHE_TTL_MS: Integer(0, 600_000, 5000,
    'How long a nested list remembers that its project exists (or not); 0: asked every time.'),
  PROJECT_CACHE_MAX: PositiveInteger(10_000, 10_000_000, 'How many projects that memory holds at most.'),
  DOCUMENTS_KEPT_MB: Integer(0, 4096, 16, 'Memory for the JSON of documents lately sent, kept beside their BSON: ' +
    'a document read again with the same bytes is copied rather than written again. 0: every document is written.'),
  HEADERS_TIMEOUT_MS: PositiveInteger(10_000, 600_000, 'How long a client may take to send a request\'s head ' +
    '(request line and headers): a slower one is answered 408 and disconnected (slowloris). Checked every second.'),
  REQUEST_TIMEOUT_MS: PositiveInteger(10_000, 600_000, 'How long a client may take to send a whole request; ' +
    'at least HEADERS_TIMEOUT_MS (lists take no body, so the two are the same by default).'),
  KEEP_ALIVE_TIMEOUT_MS: PositiveInteger(72_000, 600_000, 'How long an idle kept-alive connection stays open. ' +
    'Keep it above the idle timeout of the proxy or load balancer in front (nginx keepalive_timeout 60 s, ' +
    'AWS ALB 60 s), so that they close first.'),
  SEND_TIMEOUT_MS: PositiveInteger(10_000, 600_000, 'How long a written answer may wait for its client to read it: ' +
    'a client that reads slower is disconnected and the answer dropped, so that it holds no memory ' +
    '(checked four times a second).'),
  SHUTDOWN_DELAY_MS: Integer(0, 60_000, 5000, 'After SIGTERM (or SIGINT), /ready answers 503 and requests are ' +
    'still served this long, so that load balancers stop sending.'),
  METRICS_PORT: Integer(0, 65535, 9464,
    'Port of the Prometheus listener (GET /metrics) on HOST, never the API\'s; 0 turns it off.'),
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: Integer(0, 60_000, 1000, 'Event-loop delay beyond which lists and /ready ' +
    'answer 503 OVERLOADED. 0: never (no load shedding on this replica).'),
  CHANGES_MAX_WAITING: Integer(0, 100_000, 1000, 'Change-feed requests that may wait (`wait` above 0) or stream ' +
    'at once on one replica; beyond it, 503 OVERLOADED with Retry-After. 0: feeds answer only without waiting.'),
  CHANGES_STREAM_SECONDS: PositiveInteger(300, 86_400, 'How long a change feed\'s stream ' +
    '(Accept: application/x-ndjson) stays open before it ends with a checkpoint; the client then resumes from it.'),
  CHANGES_READ_PREFERENCE: Type.Union(
    ['primary', 'primaryPreferred', 'secondary', 'secondaryPreferred', 'nearest'].map((p) => Type.Literal(p)), {
      default: 'primary',
      description: 'Where a change feed reads the documents it sends: at majority, at or after the change ' +
        '(docs/changes.md). A secondary waits until it has applied the change, so each answer may take as long ' +
        'as its replication lag; lists keep the read preference of MONGODB_URI.'
    }),
  RATE_LIMIT_PER_MINUTE: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    description: 'List requests per caller and minute, per replica. Unset: no limit.'
  })),
  CURSOR_SECRET: Type.Optional(Type.String({
    minLength: 32,
    description: 'Keys that sign cursors and feed tokens (and seal the ETags\' stream positions), comma-separated, ' +
      'each at least 32 bytes: the first signs, all verify. Required when NODE_ENV=production (replicas share it). ' +
      'Unset: the development key of CURSOR_KEY_FILE.'
  })),
  CURSOR_KEY_FILE: Type.Optional(Type.String({
    minLength: 1,
    description: 'Outside production, while CURSOR_SECRET is unset: the file that keeps the key signing cursors ' +
      'and feed tokens (written at the first start, mode 0600), so that they survive a restart. Unset: ' +
      '.dev-keys/cursor-key in the project folder. off: a random key per process (cursors and tokens die with it).'
  })),
  AUTH_MODE: Type.Optional(Type.Union([Type.Literal('jwt'), Type.Literal('none')], {
    description: 'jwt: bearer tokens required; none: every caller reads every project. Unset: none, with a ' +
      'warning; required when NODE_ENV=production.'
  })),
  JWT_JWKS_URI: Type.Optional(Type.String({
    pattern: '^https?://',
    description: 'Where the token keys are fetched (JWKS). With AUTH_MODE=jwt, this or JWT_PUBLIC_KEY is required.'
  })),
  JWT_PUBLIC_KEY: Type.Optional(Type.String({
    minLength: 1,
    description: 'A PEM public key that verifies tokens (a newline may be written as the two characters \\n).'
  })),
  JWT_ALGORITHMS: Type.String({
    pattern: '^(RS|PS|ES)(256|384|512)(,(RS|PS|ES)(256|384|512))*$|^EdDSA$',
    default: 'RS256,ES256',
    description: 'Signature algorithms accepted (never none or HS*).'
  }),
  JWT_ISSUER: Type.Optional(Type.String({
    minLength: 1,
    description: 'The `iss` a token must have; required with AUTH_MODE=jwt.'
  })),
  JWT_AUDIENCE: Type.Optional(Type.String({
    minLength: 1,
    description: 'The `aud` a token must name; required with AUTH_MODE=jwt.'
  })),
  JWT_PROJECTS_CLAIM: Type.String({
    pattern: '^[A-Za-z0-9_:./-]{1,100}$',
    default: 'projects',
    description: 'The claim listing the project ids a token may read, or "*" for all.'
  }),
  TRUST_PROXY: Type.Optional(Type.String({
    minLength: 1,
    description: 'Which peers may set X-Forwarded-For, -Proto and -Host: true (any), a hop count, or ' +
      'comma-separated addresses and CIDRs. Unset: those headers are ignored.'
  })),
  PUBLIC_URL: Type.Optional(Type.String({
    pattern: '^https?://[^?#]+$',
    description: 'The base of every absolute URL the service writes (Link headers, the OpenAPI server), ' +
      'whatever the request\'s headers say.'
  })),
  CORS_ORIGINS: Type.Optional(Type.String({
    minLength: 1,
    description: 'Origins whose browsers may call the lists, comma-separated, or *. Unset: no CORS headers.'
  })),
  COLLATION: Type.String({
    default: DEFAULT_COLLATION,
    pattern: '^\\S(?:.*\\S)?$',
    description: 'How strings sort and compare in every list, count, cursor and feed, and the collation the ' +
      'service\'s indexes are built with: a MongoDB ICU locale with its options (`fr`, `fr,numericOrdering=true`, ' +
      '`de@collation=phonebook,strength=2`, or the collation document as JSON), or `simple` for binary order ' +
      '(docs/query-language.md, "Language").'
  }),
  COMPRESSION: OnOff('on', 'on: answers of 1 KiB or more compressed as Accept-Encoding asks (zstd where the ' +
    'runtime has it, br, gzip); off: never (for an ingress that compresses).'),
  DEMO_WRITES: OnOff('off', 'on: with the embedded database only (no MONGODB_URI), the first demo project\'s ' +
    'registrations and sessions change every two seconds, so that change feeds have something to show ' +
    '(`npm run demo:writes`).'),
  SHIMS: Type.String({
    pattern: SHIMS_PATTERN,
    default: 'all',
    description: 'Which of the reaches into dependencies\' internals that can be switched off to use ' +
      `(docs/architecture.md lists every reach and its guard): all, none, or some of ${SHIMS.join(', ')}, ` +
      'comma-separated. Each is also off when its check at start fails (for the driver: when the installed ' +
      'driver is not the version it was checked with).'
  }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), {
    default: 'info',
    description: 'Least severe log level written; one line per request only at debug and trace.'
  })
})

export type Config = Static<typeof ConfigSchema>

/** What a pattern-checked variable takes, in words (the rest is said by the schema itself). */
const PATTERN_WORDS: Record<string, string> = {
  MONGODB_URI: 'a mongodb:// or mongodb+srv:// connection string',
  MONGODB_DB: '1 to 63 characters, none of / \\ . space " $ * < > : | ?',
  JWT_JWKS_URI: 'an http:// or https:// URL',
  JWT_ALGORITHMS: 'RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, comma-separated; or EdDSA alone',
  JWT_PROJECTS_CLAIM: '1 to 100 of A-Z a-z 0-9 _ : . / -',
  PUBLIC_URL: 'an http:// or https:// URL without query or fragment',
  SHIMS: `all, none, or some of ${SHIMS.join(', ')}, comma-separated`,
  COLLATION: 'simple, or a MongoDB locale (fr, fr_CA, en, de@collation=phonebook…) with ,option=value pairs ' +
    '(strength 1–5, caseLevel, caseFirst upper/lower/off, numericOrdering, alternate non-ignorable/shifted, ' +
    'maxVariable punct/space, backwards, normalization), or that collation document as JSON'
}

/** Variables read outside the schema, for the reference and `--help`. */
export const OTHER_VARIABLES = [
  {
    name: 'NODE_ENV',
    description: 'production: MONGODB_URI, CURSOR_SECRET and AUTH_MODE are required, and logs are JSON even on a ' +
      'terminal.'
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    description: 'An OTLP/HTTP collector: turns tracing on. The other standard OTEL_* variables apply ' +
      '(OTEL_SDK_DISABLED=true turns it off).'
  }
] as const

interface SchemaLike {
  type?: string
  minimum?: number
  maximum?: number
  minLength?: number
  pattern?: string
  anyOf?: Array<{ const?: unknown }>
  default?: unknown
  description?: string
}

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
  return schema.minLength !== undefined && schema.minLength > 1
    ? `text of at least ${schema.minLength} characters`
    : 'text'
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
    const name = `  ${v.name}${v.default === undefined ? '' : `=${v.default}`}`
    lines.push(name, `      ${v.description}`, `      Takes ${v.allowed}.`)
  }
  for (const v of OTHER_VARIABLES) lines.push(`  ${v.name}`, `      ${v.description}`)
  lines.push('', 'Without MONGODB_URI the service runs on an embedded database loaded with demo data ' +
    '(EMBEDDED_DATABASE says which).')
  return lines.join('\n')
}
