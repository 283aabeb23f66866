// Every `curl` example of the user-facing docs (README.md, client/README.md, docs/*.md), run
// with bash against the service as `npm start` runs it (demo data on the embedded database), so
// that an example that stops working fails the suite. The examples are read from the Markdown,
// never copied here: a new one is tested as soon as it is written.
//
// What is an example:
// - in a ```sh, ```bash or ```shell block, each command that runs curl (a `\` continues a line);
//   a block holding a loop (while, for, until, if, case) is one example, run whole, as a script;
// - an inline code span that starts with `curl ` and names a URL or a variable (`$API`), as in
//   the operator table of docs/query-language.md (`\|` in a table cell is `|`).
// How it runs: in a fresh bash (`set -u`: a variable the doc never defines fails the example),
// after the variable assignments that come before it in the same doc, in order (`NAME=value`
// lines of shell blocks, and `NAME=value` spans of the prose when an example uses $NAME), with
// the docs' origin (http://127.0.0.1:3000, or localhost) replaced by the started service's. A
// block that runs `eval "$(npm run -s token -- --projects …)"` then `npm start` (access control)
// gets a second service with AUTH_MODE=jwt and a token minted by test/helpers/tokens.ts for the
// same projects; its `npm start` is the service this test started. Any other command beside
// curl examples in a block of examples fails the test (teach it here). Blocks without curl
// (npm, docker, kubectl, the benchmark) are not examples.
//
// What a reader would notice, asserted for each example:
// - every curl exits 0 (curl is wrapped by a shell function that adds `--max-time` and records
//   each exit status and answer), and the example as a whole exits 0;
// - every answer comes from the started service (loopback only) and is never a 5xx;
// - the status is the one the doc gives: a trailing `# 404 PROJECT_NOT_FOUND` comment, or the
//   answer shown in the ```json block right after a block of one example (docs/errors.md, the
//   error examples of README.md and docs/query-language.md): its status, `code`, and the
//   `param`, `pointer` and `code` of each of its `errors`; otherwise any 2xx;
// - it prints something, and what the prose before it says it prints, when it says so ("run
//   against `npm start`: `5 pages, 1000 documents`"); when its output is the body (one curl, no
//   pipe, no -i, -o, -w, -D or -v), the body is JSON (NDJSON, every complete line an object, for
//   an NDJSON feed) and its content type says so.
// The feed loop of docs/changes.md is also run from a saved token the service cannot read: it must
// say so, start again without `since`, and list.
// Endless examples (a feed streamed with `curl -N` or NDJSON, a `while :` loop) are stopped
// ENDLESS_AFTER_OUTPUT_MS after their first line of output (ENDLESS_S at most). They pass if
// they printed a line and every answer they got was as above; the one curl that was stopped
// may have no exit status (and no answer yet: a long poll); a stream's status is read from
// curl -v, since it never completes. Every example is bounded: curl's --max-time, `timeout`
// around bash (which ends the whole process group), and a kill after that.
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { CursorCodec } from '../../list-endpoint/cursor.js'
import { startService, untilReady, type ServiceProcess } from '../faults/service-process.js'
import { AUDIENCE, ISSUER, makeKey, mint } from '../helpers/tokens.js'

const ROOT = path.join(import.meta.dirname, '..', '..')
// Two services start; on a busy machine that alone can take most of tap's default 30 s.
t.setTimeout(120_000)

/** At least this many examples per file (what they hold today): an extraction that finds nothing fails. */
const AT_LEAST: Record<string, number> = {
  'README.md': 11,
  'client/README.md': 0,
  'docs/access-control.md': 3,
  'docs/changes.md': 2,
  'docs/errors.md': 28,
  'docs/paging.md': 1,
  'docs/query-language.md': 25
}

/** The origin the docs write for `npm start`. */
const DOCS_ORIGIN = /http:\/\/(?:127\.0\.0\.1|localhost):3000(?![0-9])/g
const CURL_MAX_TIME_S = 5
const EXAMPLE_S = 8
const ENDLESS_AFTER_OUTPUT_MS = 250
const ENDLESS_S = 6
const CONCURRENCY = 8

interface Expectation {
  /** An exact status; undefined: any 2xx. */
  status?: number
  code?: string
  errors?: Array<{ param: unknown, pointer: unknown, code: unknown }>
  /** Where the expectation was read. */
  from: string
}

interface Example {
  doc: string
  line: number
  /** The command (or the script) as the doc writes it. */
  text: string
  /** What runs before it: the doc's assignments so far (and a minted token). */
  setup: string[]
  expect: Expectation
  /** A stream or an endless loop: cut after a bounded time. */
  endless: boolean
  /** Runs against the service with AUTH_MODE=jwt. */
  auth: boolean
  /** Its standard output is the answer's body. */
  printsBody: boolean
  /** What the doc says it prints ("run against `npm start`: `5 pages, 1000 documents`"). */
  prints?: string
}

interface Item { kind: 'block' | 'span', lang: string, text: string, line: number, end: number }

const key = makeKey('docs', 'ES256')

// ---------------------------------------------------------------------------------------------
// Reading the Markdown

/** Fenced blocks and inline code spans, in document order (lines 1-based). */
function items (markdown: string): Item[] {
  const lines = markdown.split('\n')
  const found: Item[] = []
  const prose: string[] = []
  let fence: { marker: string, indent: number, lang: string, line: number, body: string[] } | undefined
  for (const [index, line] of lines.entries()) {
    if (fence === undefined) {
      const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(line)
      if (open !== null) {
        fence = { marker: open[2] as string, indent: (open[1] as string).length, lang: (open[3] as string).toLowerCase(), line: index + 1, body: [] }
        prose.push('')
      } else prose.push(line)
      continue
    }
    prose.push('')
    if (line.trim().startsWith(fence.marker) && line.trim().replace(/[`~]/g, '') === '') {
      found.push({ kind: 'block', lang: fence.lang, text: fence.body.join('\n'), line: fence.line, end: index + 1 })
      fence = undefined
    } else fence.body.push(line.slice(Math.min(fence.indent, /^\s*/.exec(line)?.[0].length ?? 0)))
  }
  // Code spans of the prose (blocks blanked out, line numbers kept); a span never crosses a blank line.
  const text = prose.join('\n')
  for (const match of text.matchAll(/`((?:[^`\n]|\n(?!\s*\n))+)`/g)) {
    const line = text.slice(0, match.index).split('\n').length
    found.push({ kind: 'span', lang: '', text: (match[1] as string).replace(/\s*\n\s*/g, ' ').replaceAll('\\|', '|'), line, end: line })
  }
  return found.sort((a, b) => a.line - b.line)
}

/** The text with quoted parts emptied and comments removed: what the shell parses as operators. */
function unquoted (text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (c === '\\') { i++; out += '_'; continue }
    if (c === "'") { i = text.indexOf("'", i + 1); if (i < 0) break; out += "''"; continue }
    if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      out += text.slice(i, j + 1).includes('$(') ? '"$("' : '""'
      i = j
      continue
    }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1] as string))) {
      // A comment runs to the end of its line: a script's next lines are still code.
      const end = text.indexOf('\n', i)
      if (end < 0) break
      i = end - 1
      continue
    }
    out += c
  }
  return out
}

/** Words of a short shell text (quotes removed), for the token command's options. */
function words (text: string): string[] {
  return [...text.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3] as string)
}

const COMPOUND = /^\s*(?:while|until|for|if|case|select)\b/
const CLOSER = /(?:^|;)\s*(?:done|fi|esac)\b/g
const OPENER = /^\s*(?:while|until|for|if|case|select)\b/
const ASSIGNMENT = /^(?:export\s+)?([A-Za-z_]\w*)=(?:\$\(.*\)|'[^']*'|"[^"]*"|[^\s'"]*)\s*(?:#.*)?$/s
const TOKEN = /^eval\s+"\$\(npm run (?:-s )?token -- (.*)\)"\s*(?:#.*)?$/
const START = /^npm start\s*(?:#.*)?$/
const STATUS_COMMENT = /\s#\s*(\d{3})(?:\s+([A-Z][A-Z0-9_]+))?\s*$/

const hasCurl = (text: string): boolean => /(?:^|[\s;|&(`])curl\s/.test(unquoted(text))

/** The block's commands: continuation lines joined, compound commands whole, comments and blank lines dropped. */
function statements (block: string, firstLine: number): Array<{ text: string, line: number }> {
  const result: Array<{ text: string, line: number }> = []
  let current: string[] = []
  let start = 0
  let depth = 0
  const lines = block.split('\n')
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] as string
    const at = i
    while (line.endsWith('\\') && i + 1 < lines.length) line += '\n' + (lines[++i] as string)
    if (current.length === 0 && (line.trim() === '' || line.trim().startsWith('#'))) continue
    if (current.length === 0) start = at
    current.push(line)
    const code = unquoted(line)
    if (OPENER.test(code)) depth++
    depth -= [...code.matchAll(CLOSER)].length
    if (depth <= 0) {
      result.push({ text: current.join('\n'), line: firstLine + 1 + start })
      current = []
      depth = 0
    }
  }
  if (current.length > 0) result.push({ text: current.join('\n'), line: firstLine + 1 + start })
  return result
}

/** `eval "$(npm run -s token -- --projects … [--ttl …] [--sub …])"`, as a TOKEN that the JWT service accepts. */
function tokenSetup (options: string): string {
  const args = words(options)
  const value = (name: string): string | undefined => args[args.indexOf(name) + 1] ?? undefined
  const projects = value('--projects')
  if (projects === undefined) throw new Error(`npm run token without --projects: ${options}`)
  const ttl = /^(\d+)([smhd]?)$/.exec(value('--ttl') ?? '1h')
  const seconds = ttl === null ? 3600 : Number(ttl[1]) * ({ '': 1, s: 1, m: 60, h: 3600, d: 86400 }[ttl[2] as string] ?? 1)
  const token = mint(key, { projects: projects === '*' ? '*' : projects.split(','), sub: value('--sub') ?? 'developer' }, { expiresIn: seconds * 1000 })
  return `export TOKEN='${token}'   # npm run token -- ${options}`
}

/** The answer a ```json block shows, when it shows one with a status. */
function shownAnswer (json: string, from: string): Expectation | undefined {
  try {
    const body = JSON.parse(json) as { status?: unknown, code?: unknown, errors?: unknown }
    if (typeof body.status !== 'number') return undefined
    const errors = Array.isArray(body.errors) ? (body.errors as Array<Record<string, unknown>>).map(({ param, pointer, code }) => ({ param, pointer, code })) : undefined
    return { status: body.status, code: typeof body.code === 'string' ? body.code : undefined, errors, from }
  } catch {
    const status = /"status"\s*:\s*(\d{3})/.exec(json)
    const code = /"code"\s*:\s*"([A-Z_]+)"/.exec(json)
    return status === null ? undefined : { status: Number(status[1]), code: code?.[1], from }
  }
}

/** Its output is the body: one curl, no pipe, list, redirection or substitution, no option that prints something else. */
function printsBody (text: string): boolean {
  const code = unquoted(text)
  if (/[|;&<>`]|\$\(/.test(code) || COMPOUND.test(code)) return false
  return !/(?:^|\s)(?:-[a-zA-Z]*[iIoODwv][a-zA-Z]*|--(?:include|head|output|remote-name|dump-header|write-out|verbose|trace\S*))(?=\s|$)/.test(code)
}

const isEndless = (text: string): boolean => {
  const code = unquoted(text)
  return /(?:^|\s)-[a-zA-Z]*N[a-zA-Z]*(?=\s|$)|--no-buffer/.test(code) || /\bwhile\s+(?::|true)\s*;/.test(code) || /application\/x-ndjson/.test(text)
}

function extract (doc: string, markdown: string): Example[] {
  const found = items(markdown)
  const shell = (item: Item) => item.kind === 'block' && ['sh', 'bash', 'shell'].includes(item.lang)
  const isExampleSpan = (item: Item) => item.kind === 'span' && /^curl\s/.test(item.text) && /\$|:\/\//.test(item.text)
  // Variables that examples use: a `NAME=value` span of the prose is a definition only for these.
  const used = new Set(found.filter((item) => shell(item) || isExampleSpan(item)).flatMap((item) => [...item.text.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((match) => match[1] as string)))
  const lines = markdown.split('\n')
  const env: string[] = []
  let auth = false
  const examples: Example[] = []
  for (const [index, item] of found.entries()) {
    if (item.kind === 'span') {
      const assignment = /^([A-Za-z_]\w*)=\S+$/.exec(item.text)
      if (assignment !== null && used.has(assignment[1] as string)) env.push(item.text)
      if (isExampleSpan(item)) {
        examples.push({ doc, line: item.line, text: item.text, setup: [...env], expect: { from: 'any 2xx' }, endless: isEndless(item.text), auth, printsBody: printsBody(item.text) })
      }
      continue
    }
    if (!shell(item)) continue
    const commands = statements(item.text, item.line)
    if (!commands.some(({ text }) => hasCurl(text))) {
      // No example here, but what it assigns holds for the examples below (docs/query-language.md).
      env.push(...commands.filter(({ text }) => ASSIGNMENT.test(text)).map(({ text }) => text))
      continue
    }
    // The prose since the block before: it may say what the example prints.
    const before = found.slice(0, index).findLast((other) => other.kind === 'block')
    const intro = lines.slice(before?.end ?? 0, item.line - 1).join(' ').replace(/\s+/g, ' ')
    const prints = /against `npm start`: `([^`]+)`/.exec(intro)?.[1]
    const next = found.slice(index + 1).find((other) => other.kind === 'block')
    const between = next === undefined ? [] : lines.slice(item.end, next.line - 1)
    const shown = next !== undefined && next.lang === 'json' && between.every((line) => line.trim() === '')
      ? shownAnswer(next.text, `the answer shown at ${doc}:${next.line}`)
      : undefined
    if (commands.some(({ text }) => COMPOUND.test(text))) {
      // A script: run whole; its top-level assignments hold for the rest of the doc.
      examples.push({ doc, line: item.line + 1, text: item.text, setup: [...env], expect: { from: 'any 2xx' }, endless: isEndless(item.text), auth, printsBody: false, prints })
      env.push(...commands.filter(({ text }) => ASSIGNMENT.test(text)).map(({ text }) => text))
      continue
    }
    const curls = commands.filter(({ text }) => hasCurl(text))
    for (const { text, line } of commands) {
      const token = TOKEN.exec(text)
      if (token !== null) {
        env.push(tokenSetup(token[1] as string))
        auth = true
      } else if (START.test(text)) {
        // The service this test started (with AUTH_MODE=jwt after `npm run token`).
      } else if (hasCurl(text)) {
        const comment = STATUS_COMMENT.exec(text)
        const expect: Expectation = comment !== null
          ? { status: Number(comment[1]), code: comment[2], from: `its comment '#${comment[1]}${comment[2] === undefined ? '' : ` ${comment[2]}`}'` }
          : shown !== undefined && curls.length === 1 ? shown : { from: 'any 2xx' }
        examples.push({ doc, line, text, setup: [...env], expect, endless: isEndless(text), auth, printsBody: printsBody(text), prints: curls.length === 1 ? prints : undefined })
        if (ASSIGNMENT.test(text)) env.push(text)
      } else if (ASSIGNMENT.test(text)) {
        env.push(text)
      } else {
        throw new Error(`${doc}:${line}: a command this test does not know how to run beside curl examples: ${text}`)
      }
    }
  }
  return examples
}

async function documents (): Promise<string[]> {
  const pages = (await readdir(path.join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)
  return ['README.md', 'client/README.md', ...pages]
}

// ---------------------------------------------------------------------------------------------
// Running an example

/**
 * Wraps curl: a bound of its own, each transfer's answer and exit status on stderr (a doc's own
 * -w still prints, after ours), and, for an endless example, -v: the status of a stream that is
 * cut before it ends is read from its headers.
 */
const PRELUDE = String.raw`set -u
curl () {
  local args=() theirs=''
  while [ $# -gt 0 ]; do
    case $1 in
      -w|--write-out) theirs=$2; shift 2 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  printf '@@start\n' >&2
  command curl -q --max-time "$EXAMPLE_CURL_MAX_TIME" ${'$'}{EXAMPLE_VERBOSE:+-v} "${'$'}{args[@]}" --write-out "%{stderr}@@answer %{http_code} %{url_effective} %{content_type}\n%{stdout}$theirs"
  local status=$?
  printf '@@exit %s\n' "$status" >&2
  return "$status"
}
`

/** One curl: its exit status (null: stopped by this test) and answer (status null: none). */
interface Answer { exit: number | null, status: number | null, url: string, type: string }
interface Outcome { exit: number | null, stdout: string, stderr: string, answers: Answer[], ms: number, cut: boolean }

function answers (stderr: string): Answer[] {
  const result: Answer[] = []
  let current: { status: number | null, url: string, type: string, host: string, path: string } | undefined
  const finish = (exit: number | null): void => {
    if (current === undefined) return
    const { status, url, type, host, path } = current
    result.push({ exit, status: status === 0 ? null : status, url: url !== '' || path === '' ? url : `http://${host}${path}`, type })
    current = undefined
  }
  for (const line of stderr.split('\n').map((text) => text.trimEnd())) {
    if (line === '@@start') {
      finish(null)
      current = { status: null, url: '', type: '', host: '', path: '' }
      continue
    }
    if (current === undefined) continue
    const exit = /^@@exit (\d+)$/.exec(line)
    if (exit !== null) {
      finish(Number(exit[1]))
      continue
    }
    const answer = /^@@answer (\d{3}) (\S*) ?(.*)$/.exec(line)
    if (answer !== null) Object.assign(current, { status: Number(answer[1]), url: answer[2], type: answer[3] })
    // What -v shows as it comes (endless examples only).
    const status = /^< HTTP\/[\d.]+ (\d{3})/.exec(line)
    if (status !== null) current.status = Number(status[1])
    const type = /^< content-type: *(.*)$/i.exec(line)
    if (type !== null) current.type = type[1] as string
    const request = /^> [A-Z]+ (\S+) HTTP/.exec(line)
    if (request !== null) current.path = request[1] as string
    const host = /^> host: *(\S+)/i.exec(line)
    if (host !== null) current.host = host[1] as string
  }
  finish(null)
  return result
}

/**
 * Runs an example in `cwd`. An endless one is stopped ENDLESS_AFTER_OUTPUT_MS after its output
 * shows what `shown` waits for (a line, unless told).
 */
async function run (example: Example, origin: string, cwd: string, shown = (stdout: string): boolean => stdout.includes('\n')): Promise<Outcome> {
  const script = [PRELUDE, ...example.setup, example.text].join('\n').replace(DOCS_ORIGIN, origin)
  const seconds = example.endless ? ENDLESS_S : EXAMPLE_S
  const started = Date.now()
  // `timeout` ends the whole process group (bash, curl, jq), even if this process dies; the kill below is the last resort.
  const child = spawn('timeout', ['-k', '1', String(seconds), 'bash', '--noprofile', '--norc', '-c', script], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: cwd, EXAMPLE_CURL_MAX_TIME: String(CURL_MAX_TIME_S), EXAMPLE_VERBOSE: example.endless ? '1' : '' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  let cut = false
  let stopping: NodeJS.Timeout | undefined
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    // An endless example has shown that it works once it prints a line: stopped shortly after (timeout passes SIGTERM on to the group).
    if (example.endless && stopping === undefined && shown(stdout)) {
      stopping = setTimeout(() => { cut = true; child.kill('SIGTERM') }, ENDLESS_AFTER_OUTPUT_MS)
    }
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const kill = setTimeout(() => child.kill('SIGKILL'), (seconds + 3) * 1000)
  const exit = await new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  clearTimeout(kill)
  clearTimeout(stopping)
  return { exit, stdout, stderr, answers: answers(stderr), ms: Date.now() - started, cut: cut || (example.endless && exit === 124) }
}

async function pool<T, R> (list: T[], size: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(list.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(size, list.length) }, async () => {
    while (next < list.length) {
      const index = next++
      results[index] = await work(list[index] as T)
    }
  }))
  return results
}

// ---------------------------------------------------------------------------------------------
// What a reader would notice

function check (t: Test, example: Example, outcome: Outcome, origin: string): void {
  const shown = `exit ${String(outcome.exit)}${outcome.cut ? ' (stopped)' : ''}, ${outcome.ms} ms\n--- stdout\n${outcome.stdout.slice(0, 2000)}\n--- stderr\n${outcome.stderr.slice(0, 3000)}`
  if (!outcome.cut) t.equal(outcome.exit, 0, `the example exits 0 (${shown})`)
  const exits = outcome.answers.map((answer) => String(answer.exit)).join(', ')
  const hint = outcome.answers.some((answer) => answer.exit === 3) ? ' (3: a malformed URL, e.g. unencoded characters)' : ''
  if (!t.ok(outcome.answers.some((answer) => answer.status !== null), `it gets an answer (curl exits: ${exits}${hint}; ${shown})`)) return
  for (const answer of outcome.answers) {
    const what = `${answer.url === '' ? '(no URL)' : answer.url} → ${String(answer.status)}, curl exit ${String(answer.exit)}`
    // Only an endless example is stopped, and only its last curl can be (a stream, or a long poll still waiting).
    const stopped = answer.exit === null && outcome.cut
    if (!stopped) t.equal(answer.exit, 0, `curl exits 0: ${what}${answer.exit === 3 ? ' (3: a malformed URL, e.g. unencoded characters)' : ''}\n${shown}`)
    if (answer.status === null) {
      t.ok(stopped, `an answer: ${what}`)
      continue
    }
    t.ok(answer.url.startsWith(`${origin}/`), `asks the started service only: ${answer.url}`)
    t.ok(answer.status < 500, `never a 5xx: ${what}`)
    if (example.expect.status !== undefined) t.equal(answer.status, example.expect.status, `the status of ${example.expect.from}: ${what}`)
    else t.ok(answer.status >= 200 && answer.status < 300, `a 2xx: ${what}\n${shown}`)
  }
  t.ok(outcome.stdout.trim() !== '', 'it prints something')
  if (example.prints !== undefined) t.ok(outcome.stdout.includes(example.prints), `it prints what the doc says: ${example.prints}`)
  if (!example.printsBody) return
  const type = outcome.answers.at(-1)?.type ?? ''
  if (type.startsWith('application/x-ndjson')) {
    const complete = outcome.stdout.slice(0, outcome.stdout.lastIndexOf('\n') + 1).split('\n').filter((line) => line !== '')
    t.ok(complete.length > 0, 'NDJSON: at least one line')
    const bad = complete.find((line) => { try { return typeof JSON.parse(line) !== 'object' } catch { return true } })
    t.equal(bad, undefined, 'NDJSON: every line is a JSON object')
    return
  }
  t.match(type, /^application\/(?:problem\+)?json\b/, 'the body is JSON (content type)')
  let body: Record<string, unknown> | undefined
  try {
    body = JSON.parse(outcome.stdout) as Record<string, unknown>
  } catch (error) {
    t.fail(`the body is JSON: ${(error as Error).message}\n${shown}`)
    return
  }
  if (example.expect.code !== undefined) t.equal(body.code, example.expect.code, `the code of ${example.expect.from}`)
  if (example.expect.errors !== undefined) {
    const errors = Array.isArray(body.errors) ? (body.errors as Array<Record<string, unknown>>).map(({ param, pointer, code }) => ({ param, pointer, code })) : body.errors
    t.same(errors, example.expect.errors, `the errors (param, pointer, code) of ${example.expect.from}`)
  }
}

// ---------------------------------------------------------------------------------------------

const files = await documents()
const found = new Map<string, Example[]>()
for (const file of files) found.set(file, extract(file, await readFile(path.join(ROOT, file), 'utf8')))

t.test('the docs hold their shell examples (read from the Markdown)', async (t) => {
  for (const [file, examples] of found) {
    t.comment(`${file}: ${examples.length} curl examples (${examples.filter((example) => example.expect.status !== undefined).length} with a documented error status, ${examples.filter((example) => example.endless).length} endless, ${examples.filter((example) => example.auth).length} with AUTH_MODE=jwt)`)
    t.ok(examples.length >= (AT_LEAST[file] ?? 0), `${file}: at least ${AT_LEAST[file] ?? 0} examples, found ${examples.length}`)
  }
  for (const file of Object.keys(AT_LEAST)) t.ok(found.has(file), `${file} is read`)
})

t.test('every example works against the service as npm start runs it', async (t) => {
  const all = [...found.values()].flat()
  const needsAuth = all.some((example) => example.auth)
  const services: ServiceProcess[] = []
  const start = async (env: Record<string, string>): Promise<ServiceProcess> => {
    // On loopback, on a port the system picks (startService: HOST=127.0.0.1, PORT=0), with the
    // embedded database and its demo data, whatever this shell's MONGODB_URI says.
    const service = await startService({ MONGODB_URI: '', SHUTDOWN_DELAY_MS: '0', DEMO_WRITES: 'off', ...env })
    services.push(service)
    const ready = await untilReady(service.url, 15_000)
    if (ready === Infinity) throw new Error(`not ready within 15 s:\n${service.lines.join('\n')}`)
    return service
  }
  const begun = Date.now()
  // Both at once: the examples without tokens run while the JWT service starts.
  const open = start({ AUTH_MODE: 'none' })
  const closed = needsAuth
    ? start({ AUTH_MODE: 'jwt', JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, JWT_PUBLIC_KEY: key.publicPem, JWT_ALGORITHMS: 'ES256' })
    : undefined
  closed?.catch(() => {}) // awaited below: not an unhandled rejection meanwhile
  open.catch(() => {})
  // Should this process end without its teardown (tap's timeout), the services still stop.
  const orphans = () => { for (const service of services) service.child.kill('SIGTERM') }
  process.once('exit', orphans)
  // Whatever happens, once both have started (or failed to): stopped, and killed if they do not
  // stop (the last subtest stops them too, and checks how).
  t.teardown(async () => {
    await Promise.allSettled([open, closed])
    await Promise.all(services.map(async (service) => await stop(service)))
    process.removeListener('exit', orphans)
  })
  const cwd = await mkdtemp(path.join(tmpdir(), 'shell-examples-'))
  t.teardown(async () => await rm(cwd, { recursive: true, force: true }))
  const jq = spawnSync('bash', ['-c', 'command -v jq'], { stdio: 'ignore', timeout: 5000 }).status === 0
  const runnable = (example: Example) => jq || !/\bjq\b/.test(unquoted(example.text))

  const origin = (await open).url
  const listening = Date.now() - begun
  // The endless ones first: their time passes while the others run.
  const plain = all.filter((example) => !example.auth && runnable(example)).sort((a, b) => Number(b.endless) - Number(a.endless))
  const outcomes = new Map<Example, { outcome: Outcome, origin: string }>()
  const results = await pool(plain, CONCURRENCY, async (example) => await run(example, origin, cwd))
  plain.forEach((example, index) => outcomes.set(example, { outcome: results[index] as Outcome, origin }))
  if (closed !== undefined) {
    const authOrigin = (await closed).url
    // One at a time, in the doc's order.
    for (const example of all.filter((example) => example.auth && runnable(example))) {
      outcomes.set(example, { outcome: await run(example, authOrigin, cwd), origin: authOrigin })
    }
  }
  const slowest = [...outcomes].sort((a, b) => b[1].outcome.ms - a[1].outcome.ms).slice(0, 3).map(([example, { outcome }]) => `${example.doc}:${example.line} ${outcome.ms} ms`)
  t.comment(`services ready in ${listening} ms; ${outcomes.size} examples ran in ${Date.now() - begun - listening} ms more (slowest: ${slowest.join(', ')})`)

  for (const example of all) {
    const name = `${example.doc}:${example.line} ${example.text.split('\n')[0]?.slice(0, 110) ?? ''}`
    const ran = outcomes.get(example)
    if (ran === undefined) {
      t.test(name, { skip: 'jq is not installed (the example pipes into jq)' }, async () => {})
      continue
    }
    t.test(name, async (t) => { check(t, example, ran.outcome, ran.origin) })
  }

  // The feed loop of docs/changes.md, run again with the token a previous run saved, which the
  // service cannot read (signed with another key, as after a restart without CURSOR_SECRET).
  const loop = all.find((example) => example.doc === 'docs/changes.md' && /\bwhile\b/.test(unquoted(example.text)) && example.text.includes('/changes'))
  t.test('the feed loop of docs/changes.md starts again without since when its saved token cannot be used', { skip: jq ? false : 'jq is not installed' }, async (t) => {
    if (!t.ok(loop, 'docs/changes.md has a feed loop')) return
    const saved = /\bcat (\S+)/.exec(loop?.text ?? '')?.[1]
    if (!t.ok(saved, 'it resumes from a token saved in a file')) return
    const dir = await mkdtemp(path.join(tmpdir(), 'shell-examples-loop-'))
    t.teardown(async () => await rm(dir, { recursive: true, force: true }))
    const foreign = new CursorCodec([randomBytes(32)]).encode({ path: 'another service', filter: '{}', sort: 'changes', fields: '*' }, [])
    await writeFile(path.join(dir, saved as string), `${foreign}\n`)
    const outcome = await run(loop as Example, origin, dir, (stdout) => stdout.includes('["upsert"'))
    const shown = `\n--- stdout\n${outcome.stdout.slice(0, 2000)}\n--- stderr\n${outcome.stderr.slice(0, 2000)}`
    t.match(outcome.stdout, /^400 INVALID_CURSOR: .*start again without since/m, `it prints why${shown}`)
    t.match(outcome.stdout, /^starting again without since/m, 'and what it does')
    t.match(outcome.stdout, /^\["upsert","[0-9a-f]{24}",/m, 'then the listing comes')
    t.same(outcome.answers.slice(0, 2).map((answer) => answer.status), [400, 200], 'a 400, then a 200 without since')
    t.not((await readFile(path.join(dir, saved as string), 'utf8')).trim(), foreign, 'the new token is saved')
  })

  t.test('the services stop cleanly on SIGTERM', async (t) => {
    for (const service of services) t.equal(await stop(service), 0, `${service.url} exits 0`)
  })
})

/** SIGTERM, then SIGKILL if it has not exited within 5 s: its exit code ('killed' if it took the kill). */
async function stop (service: ServiceProcess): Promise<number | null | 'killed'> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM')
  let timer: NodeJS.Timeout | undefined
  const code = await Promise.race([service.exited, new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), 5000) })])
  clearTimeout(timer)
  if (code !== 'late') return code
  service.child.kill('SIGKILL')
  await service.exited
  return 'killed'
}
