// `npm run docs`: writes the generated parts of docs/errors.md (every error code, with the
// answer the service really gives) and docs/configuration.md (every variable, from the
// configuration schema). test/docs/reference-docs.test.ts fails when either page is behind.
import { readFile, writeFile } from 'node:fs/promises'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { replaceSection } from '../lib/generated-section.js'
import { classifyDatabaseError } from '../database/classify-error.js'
import { NO_TOKEN_MESSAGE } from '../list-endpoint/list-problems.js'
import { HEADERS_TOO_LARGE_DETAIL } from '../plugins/errors.js'
import { expired, unavailable } from '../changes/feed-problems.js'
import { OTHER_VARIABLES, configReference } from '../schemas/config.js'
import {
  ERRORS,
  ERROR_CODES,
  ProblemError,
  internalError,
  problem,
  type ErrorCodeName,
  type Problem
} from '../schemas/problem.js'
import { MongoNetworkError, MongoOperationTimeoutError } from 'mongodb'

export const COMMAND = 'npm run docs'
export const PAGES = { errors: 'docs/errors.md', configuration: 'docs/configuration.md' } as const

const PROJECT = '65cd7e3007370d3300000000'
const q = (filter: unknown): string => `filter=${encodeURIComponent(JSON.stringify(filter))}`

type Inject = (request: InjectOptions) => Promise<{ statusCode: number, body: string }>
type Request = InjectOptions & { url: string }

/**
 * A request that gets the code's answer from the service on the demo data (or is made from an
 * earlier answer).
 */
interface Asked { request: Request | ((inject: Inject) => Promise<Request>), shown?: string }
/**
 * An answer that takes more than a request (a fault, a token, a socket): built by the code that
 * sends it.
 */
interface Built { body: Problem, when: string }

const database = (error: Error): Problem => {
  const found = classifyDatabaseError(error)
  if (found === undefined) throw new Error(`${error.name} is not a database fault`)
  return problem(found.status, found.code, found.detail, [], found.param)
}

/** One way to see each code; the type makes a new code fail to compile until it has one. */
const EXAMPLES: Record<ErrorCodeName, Asked | Built> = {
  INVALID_JSON: { request: { url: `/projects?filter=${encodeURIComponent('{"name":')}` } },
  DUPLICATE_KEY: { request: { url: `/projects?filter=${encodeURIComponent('{"name":"a","name":"b"}')}` } },
  FILTER_NOT_OBJECT: { request: { url: `/projects?${q(['name'])}` } },
  FILTER_TOO_LARGE: {
    request: { url: `/projects?${q({ name: 'x'.repeat(10_000) })}` },
    shown: '/projects?filter={"name":"xxxx…"} (10,011 characters)'
  },
  UNKNOWN_FIELD: { request: { url: `/projects?${q({ nmae: 'Festival' })}` } },
  RELATED_PATH: { request: { url: `/projects/${PROJECT}/sessions?${q({ 'activity.name': 'Yoga' })}` } },
  SCOPE_FIELD: { request: { url: `/projects/${PROJECT}/sessions?${q({ project: PROJECT })}` } },
  BLOCKED_OPERATOR: { request: { url: `/projects?${q({ $where: 'sleep(1000)' })}` } },
  UNKNOWN_OPERATOR: { request: { url: `/projects?${q({ $nor: [{ public: true }] })}` } },
  FILTER_TOO_COMPLEX: {
    request: { url: `/projects?${q({ $or: [{ $and: [{ $or: [{ $or: [{ public: true }] }] }] }] })}` }
  },
  OPERATOR_NOT_ALLOWED: { request: { url: `/projects?${q({ public: { $regex: 'true' } })}` } },
  INVALID_VALUE: { request: { url: `/projects?${q({ public: 'yes' })}` } },
  INVALID_DATE: { request: { url: `/projects?${q({ createdAt: { $gte: '2024-02-30' } })}` } },
  INVALID_OBJECT_ID: { request: { url: `/projects?${q({ _id: '65cd7e30' })}` } },
  REGEX_TOO_LONG: {
    request: { url: `/projects?${q({ name: { $regex: 'a'.repeat(501) } })}` },
    shown: '/projects?filter={"name":{"$regex":"aaaa…"}} (a pattern of 501 characters)'
  },
  INVALID_REGEX: { request: { url: `/projects?${q({ name: { $regex: '(?i)festival' } })}` } },
  UNSAFE_REGEX: { request: { url: `/projects?${q({ name: { $regex: '^(a+)+$' } })}` } },
  INVALID_REGEX_OPTIONS: { request: { url: `/projects?${q({ name: { $regex: 'festival', $options: 'g' } })}` } },
  ARRAY_TOO_LARGE: {
    request: { url: `/projects?${q({ name: { $in: Array.from({ length: 101 }, (_, i) => `n${i}`) } })}` },
    shown: '/projects?filter={"name":{"$in":["n0","n1",…,"n100"]}}'
  },
  MIXED_FILTER_NOTATION: { request: { url: `/projects?${q({ public: true })}&filter[name]=Festival` } },
  INVALID_SORT: { request: { url: '/projects?sort=name' } },
  INVALID_LIMIT: { request: { url: '/projects?limit=5000' } },
  INVALID_SKIP: { request: { url: '/projects?skip=-1' } },
  INVALID_COUNT: { request: { url: '/projects?count=yes' } },
  DUPLICATE_PARAMETER: { request: { url: '/projects?limit=10&limit=20' } },
  UNKNOWN_PARAMETER: { request: { url: '/projects?page=2' } },
  INVALID_PROJECT_ID: { request: { url: '/projects/festival/sessions' } },
  PROJECT_NOT_FOUND: { request: { url: '/projects/65cd7e3007370d3300000009/sessions' } },
  NOT_FOUND: { request: { url: '/project' } },
  QUERY_TIMEOUT: {
    body: database(new MongoOperationTimeoutError('Timed out')),
    when: 'a query runs past QUERY_TIMEOUT_MS'
  },
  DATABASE_UNAVAILABLE: {
    body: database(new MongoNetworkError('connect ECONNREFUSED')),
    when: 'the database cannot be reached'
  },
  INTERNAL_ERROR: { body: internalError(), when: 'anything unforeseen' },
  INVALID_FIELDS: { request: { url: '/projects?fields=name,nmae' } },
  INVALID_CURSOR: { request: { url: '/projects?after=eyJ2IjoxfQ' } },
  CURSOR_MISMATCH: {
    request: async (inject) => {
      const { next } = JSON.parse((await inject({
        url: `/projects?limit=1&${q({ public: true })}`
      })).body) as { next: string }
      return { url: `/projects?limit=1&after=${next}` }
    },
    shown: '/projects?limit=1&after=<next of /projects?limit=1&filter={"public":true}>'
  },
  METHOD_NOT_ALLOWED: { request: { method: 'POST', url: '/projects' } },
  PRECONDITION_FAILED: {
    request: { url: '/projects?limit=1', headers: { 'if-match': 'W/"v2.a"' } },
    shown: '/projects?limit=1 with If-Match: W/"v2.a"'
  },
  URI_TOO_LONG: {
    request: { url: `/projects/${'f'.repeat(101)}/sessions` },
    shown: '/projects/ffff…(101 characters)/sessions'
  },
  HEADERS_TOO_LARGE: {
    body: problem(431, 'HEADERS_TOO_LARGE', HEADERS_TOO_LARGE_DETAIL),
    when: 'the URL and headers pass 16 KiB (Node\'s HTTP parser refuses them before any route)'
  },
  BAD_REQUEST: {
    request: { url: '/projects', headers: { 'content-type': 'application/json' }, payload: '{}' },
    shown: '/projects with a body'
  },
  UNAUTHENTICATED: {
    body: ProblemError.about('authorization', 401, 'UNAUTHENTICATED', NO_TOKEN_MESSAGE).body(),
    when: 'AUTH_MODE=jwt and no Authorization header'
  },
  RATE_LIMITED: {
    body: new ProblemError(429, 'RATE_LIMITED', 'More than 600 list requests a minute; retry in 42 s.').body(),
    when: 'RATE_LIMIT_PER_MINUTE=600 and a caller\'s 601st list request of the minute'
  },
  OVERLOADED: {
    body: new ProblemError(503, 'OVERLOADED', 'The service is overloaded; retry shortly.').body(),
    when: 'the event loop lags past OVERLOAD_MAX_EVENT_LOOP_DELAY_MS'
  },
  AUTH_UNAVAILABLE: {
    body: ProblemError.about('authorization', 503, 'AUTH_UNAVAILABLE',
      'The keys that verify bearer tokens cannot be obtained from the identity provider now; retry shortly.').body(),
    when: 'the JWKS endpoint does not answer for a token whose key is not cached'
  },
  CHANGES_EXPIRED: {
    body: expired().body(),
    when: 'a change feed is asked to go on from a token older than the database\'s change history (its oplog), ' +
      'or from a database since replaced'
  },
  CHANGES_UNAVAILABLE: {
    body: unavailable('the collection registrations does not record change stream pre- and post-images: enable them ' +
      'with db.runCommand({ collMod: "registrations", changeStreamPreAndPostImages: { enabled: true } })').body(),
    when: 'the database is a standalone server or older than MongoDB 6.0, the service\'s user may not open change ' +
      'streams, or a collection does not record pre- and post-images'
  },
  INVALID_GROUP: { request: { url: `/projects/${PROJECT}/registrations/counts?by=sessionsSubscriptions` } }
}

const json = (body: unknown): string => JSON.stringify(body, null, 2)

const requestOf = async (example: Asked, inject: Inject): Promise<Request> =>
  typeof example.request === 'function' ? await example.request(inject) : example.request

/** docs/errors.md's generated part: a table of every code, then each with an answer. */
export async function renderErrors (inject: Inject): Promise<string> {
  const lines = ['| Code | Status | Meaning |', '|---|---|---|']
  for (const code of ERROR_CODES) {
    lines.push(`| [\`${code}\`](#${code.toLowerCase()}) | ${ERRORS[code].status.join(', ')} | ` +
      `${ERRORS[code].meaning} |`)
  }
  for (const code of ERROR_CODES) {
    const example = EXAMPLES[code]
    lines.push('', `### ${code}`, '', `${ERRORS[code].status.join(', ')} — ${ERRORS[code].meaning}`, '')
    let body: Problem
    if ('request' in example) {
      const request = await requestOf(example, inject)
      const res = await inject(request)
      const { requestId: _id, ...answer } = JSON.parse(res.body) as Problem
      if (answer.code !== code) throw new Error(`${request.url} answers ${answer.code}, not ${code}`)
      body = answer
      lines.push(`\`${request.method ?? 'GET'} ${example.shown ?? decodeURIComponent(request.url)}\` ` +
        `answers ${res.statusCode}:`)
      const command = example.shown === undefined ? curlOf(request) : undefined
      if (command !== undefined) lines.push('', '```sh', command, '```')
    } else {
      body = example.body
      lines.push(`When ${example.when}:`)
    }
    lines.push('', '```json', json({ ...body, requestId: '3f1c9a2e-…' }), '```')
  }
  return lines.join('\n')
}

/**
 * A shell command that sends `request` (a plain GET) to $API with curl, each parameter URL-encoded
 * by curl.
 */
function curlOf (request: Request): string | undefined {
  if ((request.method ?? 'GET') !== 'GET' || request.headers !== undefined || request.payload !== undefined) {
    return undefined
  }
  const quote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`
  const [path, query = ''] = request.url.split('?') as [string, string?]
  const pairs = query === '' ? [] : query.split('&').map((pair) => decodeURIComponent(pair.replaceAll('+', ' ')))
  return [`curl -sG "$API${path}"`, ...pairs.map((pair) => `--data-urlencode ${quote(pair)}`)].join(' ')
}

/** docs/configuration.md's generated part: every variable, as `npm start -- --help` prints them. */
export function renderConfiguration (): string {
  const cell = (text: string): string => text.replaceAll('|', '\\|')
  const lines = ['| Variable | Default | Takes | Meaning |', '|---|---|---|---|']
  for (const v of configReference()) {
    lines.push(`| \`${v.name}\` | ${v.default === undefined ? 'unset' : `\`${v.default}\``} | ` +
      `${cell(v.allowed)} | ${cell(v.description)} |`)
  }
  for (const v of OTHER_VARIABLES) lines.push(`| \`${v.name}\` | unset | | ${cell(v.description)} |`)
  return lines.join('\n')
}

export async function renderPages (inject: Inject): Promise<Record<keyof typeof PAGES, string>> {
  return { errors: await renderErrors(inject), configuration: renderConfiguration() }
}

/** The app on the stand-in with the demo data, as `npm start` runs it, for as long as `use` runs. */
async function withDemoService<T> (use: (fastify: FastifyInstance) => Promise<T>): Promise<T> {
  // Run from the sources through tsx, which @fastify/autoload cannot detect by itself.
  if (import.meta.url.endsWith('.ts')) process.env.FASTIFY_AUTOLOAD_TYPESCRIPT = '1'
  const [
    { default: Fastify }, { default: app, serverOptions }, { readConfig }, { start }, { seedDemoData }
  ] = await Promise.all([
    import('fastify'),
    import('../app.js'),
    import('../plugins/config.js'),
    import('../offline-mongodb/server.js'),
    import('../demo-data/seed.js')
  ])
  const database = await start()
  const config = {
    ...readConfig({}), CURSOR_KEY_FILE: 'off', LOG_LEVEL: 'silent' as const, METRICS_PORT: 0, MONGODB_URI: database.uri
  }
  try {
    await seedDemoData(database.uri, config.MONGODB_DB)
    const fastify = Fastify(serverOptions(config))
    await fastify.register(app, { config })
    await fastify.ready()
    try { return await use(fastify) } finally { await fastify.close() }
  } finally {
    await database.close()
  }
}

if (/reference-docs\.[jt]s$/.test(process.argv[1] ?? '')) {
  const pages = await withDemoService(async (fastify) =>
    await renderPages(async (request) => await fastify.inject(request)))
  for (const [name, file] of Object.entries(PAGES) as Array<[keyof typeof PAGES, string]>) {
    await writeFile(file, replaceSection(await readFile(file, 'utf8'), COMMAND, pages[name], file))
    console.log(`written: ${file}`)
  }
}
