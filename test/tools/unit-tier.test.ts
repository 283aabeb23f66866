// `npm run test:unit` is the tier that needs no database, network, child process, browser, nginx or
// python: no file it runs reaches, through the imports it follows from the repository (static,
// side-effect, re-exports and dynamic), what starts or connects to one.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { UNIT_FILES } from '../_groups/groups.js'
import { importsIn } from '../helpers/imports.js'

const ROOT = path.resolve(import.meta.dirname, '..', '..')

/** A repository file's text (path from the root), or undefined when there is none. */
type Source = (file: string) => Promise<string | undefined>
const repository: Source = async (file) => await readFile(path.join(ROOT, file), 'utf8').catch(() => undefined)

/** Repository files a unit test must not reach, and why. */
const FORBIDDEN: Record<string, string> = {
  'test/helpers/database.ts': 'the test database',
  'test/helpers/build.ts': 'the app on the test database',
  'test/helpers/pcre2-oracle.ts': "python's PCRE2 oracle",
  'test/faults/fault-proxy.ts': 'the fault proxy',
  'test/faults/fault-app.ts': 'the fault proxy',
  'test/faults/service-process.ts': 'a spawned service',
  'process/choose-database.ts': 'the embedded database'
}
/** Modules (with or without `node:`, and their subpaths) that open sockets or start processes. */
const FORBIDDEN_MODULES: Record<string, string> = {
  child_process: 'a child process',
  cluster: 'child processes',
  worker_threads: 'a thread running code this check does not follow',
  net: 'sockets',
  tls: 'sockets',
  dgram: 'sockets',
  dns: 'the network (name resolution)',
  http2: 'sockets',
  undici: 'the network',
  '@fastify/mongodb': 'a database connection',
  '@opentelemetry/exporter-trace-otlp-proto': 'the network (a trace collector)',
  autocannon: 'the network',
  'mongodb-memory-server': 'a mongod process',
  'mongodb-memory-server-core': 'a mongod process',
  playwright: 'a browser',
  'playwright-core': 'a browser'
}
/** node:http and node:https serve and request with everything but these (schemas/problem.ts takes STATUS_CODES). */
const HARMLESS_HTTP = new Set(['STATUS_CODES', 'METHODS'])
/**
 * Files a unit test may import for their other exports, and what these exports start (their sockets are
 * behind them).
 */
const FORBIDDEN_EXPORTS: Record<string, Record<string, string>> = {
  'test/helpers/tokens.ts': { startJwksServer: 'a JWKS server on loopback' }
}
/**
 * Code of a reached file that connects or loads what this check cannot see, whatever it imports (unless
 * the file declares its own).
 */
const FORBIDDEN_CODE: Array<{ code: RegExp, what: string, testsOnly?: boolean, unless?: RegExp }> = [
  { code: /\bnew\s+MongoClient\b|\bMongoClient\s*\.\s*connect\b/, what: 'connects a MongoClient' },
  // The app's own code takes fetch as an option and defaults to the global one: a test passes its own.
  {
    code: /(?<![\w$.#])fetch\s*\(|\bglobalThis\s*\.\s*fetch\s*\(/,
    what: 'calls the global fetch',
    testsOnly: true,
    unless: /\b(?:const|let|var|function)\s+fetch\b/
  },
  { code: /\bcreateRequire\b/, what: 'loads modules with require(), which this check does not follow' }
]
/** A string naming python or nginx as a program. */
const PROGRAM = /^(?:.*\/)?(?:python[\d.]*|nginx)$/

/** An import: its specifier, and the names it binds ('*' for all of them: default, namespace, dynamic). */
interface Import { specifier: string, names: string[] | '*' }

/** Splits a source into its code (comments removed) and its string literals. */
function lex (text: string): { code: string, strings: string[] } {
  const strings: string[] = []
  const code = text.replace(/('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`)|\/\/[^\n]*|\/\*[\s\S]*?\*\//g,
    (match, string?: string) => {
      if (string === undefined) return ''
      strings.push(string.slice(1, -1))
      return string
    })
  return { code, strings }
}

/**
 * The imports of `text` that load something at run time (type-only ones are erased), and dynamic ones it
 * cannot read.
 */
function importsOf (text: string): { imports: Import[], unreadable: string[] } {
  const imports: Import[] = []
  const unreadable: string[] = []
  for (const { specifier, clause, typeOnly, call } of importsIn(text)) {
    if (typeOnly) continue
    if (specifier === undefined) { unreadable.push(call ?? ''); continue }
    const named = /^\{([^}]*)\}$/.exec(clause.trim())
    // A default, a namespace, `export *` or a dynamic import binds all the module offers.
    const names = clause === ''
      ? []
      : named === null
        ? '*'
        : (named[1] ?? '').split(',').map((name) => name.trim())
            .filter((name) => name !== '' && !name.startsWith('type '))
            .map((name) => name.split(/\s+as\s+/)[0] as string)
    imports.push({ specifier, names })
  }
  return { imports, unreadable }
}

/** The repository file a relative specifier of `from` names (a `.js` specifier is the `.ts` source beside it). */
async function resolve (from: string, specifier: string, read: Source): Promise<string | undefined> {
  const target = path.relative(ROOT, path.resolve(ROOT, path.dirname(from), specifier))
  for (const candidate of [target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts'), target]) {
    if (await read(candidate) !== undefined) return candidate
  }
  return undefined
}

/** What `file` reaches, directly or through the repository's files it imports, that a unit test must not. */
async function violations (file: string, read: Source = repository): Promise<string[]> {
  const found: string[] = []
  const reached = new Set<string>()
  const todo = [file]
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    if (reached.has(next)) continue
    reached.add(next)
    const text = await read(next)
    if (text === undefined) { found.push(`${next} is not in the repository`); continue }
    if (FORBIDDEN[next] !== undefined) found.push(`${next}: ${FORBIDDEN[next]}`)
    const { code, strings } = lex(text)
    const { imports, unreadable } = importsOf(text)
    for (const call of unreadable) found.push(`${next}: ${call}…, an import this check cannot follow`)
    const isTest = next.startsWith('test/') || next.includes('/test/')
    for (const { code: pattern, what, testsOnly = false, unless } of FORBIDDEN_CODE) {
      if ((!testsOnly || isTest) && pattern.test(code) && unless?.test(code) !== true) found.push(`${next} ${what}`)
    }
    for (const program of strings.filter((string) => PROGRAM.test(string))) found.push(`${next} names ${program}`)
    for (const { specifier, names } of imports) {
      if (specifier.startsWith('.')) {
        const target = await resolve(next, specifier, read)
        if (target === undefined) {
          found.push(`${next} imports ${specifier}, which is not in the repository`)
          continue
        }
        for (const [name, what] of Object.entries(FORBIDDEN_EXPORTS[target] ?? {})) {
          if (names === '*' || names.includes(name)) found.push(`${next} imports ${name} from ${target}: ${what}`)
        }
        todo.push(target)
        continue
      }
      const module = specifier.replace(/^node:/, '')
      const forbidden = Object.keys(FORBIDDEN_MODULES).find((name) => module === name || module.startsWith(`${name}/`))
      if (forbidden !== undefined) found.push(`${next} imports ${specifier}: ${FORBIDDEN_MODULES[forbidden] ?? ''}`)
      const serving = names === '*' ? ['*'] : names.filter((name) => !HARMLESS_HTTP.has(name))
      if (/^https?$/.test(module) && serving.length > 0 && FORBIDDEN_EXPORTS[next] === undefined) {
        found.push(`${next} imports ${serving.join(', ')} from ${specifier}: servers and requests`)
      }
    }
  }
  return found
}

t.test('the unit tier reaches no database, network, child process, browser, nginx or python', async (t) => {
  t.ok(UNIT_FILES.length >= 15, `${UNIT_FILES.length} files in the unit tier`)
  for (const file of UNIT_FILES) t.same(await violations(file), [], file)
})

/** The repository with these files added or replaced. */
const withFiles = (files: Record<string, string>): Source => async (file) => files[file] ?? await repository(file)
const FIXTURE = 'test/lib/fixture.test.ts'

t.test('the check can fail: every way of reaching the network or a process is found', async (t) => {
  const cases: Array<[string, string, Record<string, string>?]> = [
    ["import net from 'net'", 'imports net'],
    ["import { connect } from 'node:tls'", 'imports node:tls'],
    ["import { lookup } from 'node:dns/promises'", 'imports node:dns/promises'],
    ["import { request } from 'undici'", 'imports undici'],
    ["import { get } from 'node:https'", 'imports get from node:https'],
    ["import * as http from 'http'", 'imports * from http'],
    ["export { createServer } from 'node:http'", 'imports createServer from node:http'],
    ["const { spawn } = await import('node:child_process')", 'imports node:child_process'],
    ["const m = await import(process.env.MODULE ?? '')", 'an import this check cannot follow'],
    ["const client = new MongoClient('mongodb://localhost')", 'connects a MongoClient'],
    ["await fetch('http://127.0.0.1/')", 'calls the global fetch'],
    ["const run = 'python3'", 'names python3'],
    ["const server = '/usr/sbin/nginx'", 'names /usr/sbin/nginx'],
    ["import { startJwksServer } from '../helpers/tokens.js'", 'imports startJwksServer from test/helpers/tokens.ts'],
    ["import { build } from '../helpers/build.js'", 'test/helpers/build.ts: the app on the test database'],
    ["import { run } from './missing.js'", 'which is not in the repository'],
    // Through the repository's files: a side-effect import, a re-export, a dynamic import.
    ["import './side.js'", 'test/lib/side.ts imports node:net', { 'test/lib/side.ts': "import 'node:net'" }],
    ["export * from './again.js'", 'test/lib/again.ts imports node:http2',
      { 'test/lib/again.ts': "export { connect } from 'node:http2'" }],
    ["const { stop } = await import('./later.js')", 'test/lib/later.ts imports mongodb-memory-server',
      { 'test/lib/later.ts': "import { MongoMemoryReplSet } from 'mongodb-memory-server'" }]
  ]
  for (const [line, expected, others = {}] of cases) {
    const found = await violations(FIXTURE, withFiles({ [FIXTURE]: `import t from 'tap'\n${line}\n`, ...others }))
    t.ok(found.some((violation) => violation.includes(expected)), `${line}: ${expected}`)
  }
  t.ok((await violations('test/list-query/logical-filters.test.ts')).some((found) =>
    found.includes('test/helpers/database.ts')), 'a file that builds the app reaches the test database')
  t.ok((await violations('client/test/walk.test.ts')).some((found) => found.includes('node:child_process')),
    'a file that runs a program imports node:child_process')
})

t.test('the check lets pass what opens nothing: BSON types, status texts, types, a fetch of its own, ' +
  'comments', async (t) => {
  const harmless = [
    "import { ObjectId, type MongoClient } from 'mongodb'",
    "import { STATUS_CODES } from 'node:http'",
    "import type { Server } from 'node:net'",
    "import { makeKey } from '../helpers/tokens.js'",
    'const fetch = async (): Promise<Response> => new Response(); await fetch()',
    "// we used to fetch('http://x') and import('node:net'); no more: 'python3'",
    "await import('../helpers/until.js')"
  ]
  for (const line of harmless) {
    t.same(await violations(FIXTURE, withFiles({ [FIXTURE]: `import t from 'tap'\n${line}\n` })), [], line)
  }
})
