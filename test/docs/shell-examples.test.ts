// Every `curl` example of the user-facing docs (README.md, client/README.md, docs/*.md), run
// with bash against the service as `npm start` runs it (demo data on the embedded database), so
// that an example that stops working fails the suite. The examples are read from the Markdown
// (doc-examples.ts, which fails on a command beside them that it does not know: teach it there),
// never copied here: a new one is tested as soon as it is written. What an example is, how it
// runs and what is asserted of it: docs/architecture.md, "How the docs' examples are run".
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { CursorCodec } from '../../list-endpoint/cursor.js'
import { readConfig } from '../../plugins/config.js'
import { shutdownBoundMs } from '../../process/service.js'
import { SLACK_MS } from '../faults/fault-app.js'
import { startService, untilReady, type ServiceProcess } from '../faults/service-process.js'
import { withoutTool } from '../helpers/required-tool.js'
import { AUDIENCE, ISSUER } from '../helpers/tokens.js'
import { documents, extract, key, unquoted, type Example } from './doc-examples.js'
import { CONCURRENCY, pool, run, type Outcome } from './run-example.js'
const ROOT = path.join(import.meta.dirname, '..', '..')
// Two services start before the examples run: with the rest of the suite running, the file can outlast
// the 90 s a file is given (package.json's tap `timeout`, FILE_TIMEOUT_MS in test/_groups/groups.ts).
t.setTimeout(120_000)

/**
 * At least this many examples per file (a floor below each file's current count): an extraction
 * that finds nothing fails.
 */
const AT_LEAST: Record<string, number> = {
  'README.md': 11,
  'client/README.md': 0,
  'docs/access-control.md': 3,
  'docs/changes.md': 2,
  'docs/errors.md': 28,
  'docs/paging.md': 1,
  'docs/query-language.md': 25
}

// ---------------------------------------------------------------------------------------------
// What a reader would notice

function check (t: Test, example: Example, outcome: Outcome, origin: string): void {
  const shown = `exit ${String(outcome.exit)}${outcome.cut ? ' (stopped)' : ''}, ${outcome.ms} ms\n--- stdout\n` +
    `${outcome.stdout.slice(0, 2000)}\n--- stderr\n${outcome.stderr.slice(0, 3000)}`
  if (!outcome.cut) t.equal(outcome.exit, 0, `the example exits 0 (${shown})`)
  const exits = outcome.answers.map((answer) => String(answer.exit)).join(', ')
  const hint = outcome.answers.some((answer) => answer.exit === 3)
    ? ' (3: a malformed URL, e.g. unencoded characters)'
    : ''
  if (!t.ok(outcome.answers.some((answer) => answer.status !== null),
    `it gets an answer (curl exits: ${exits}${hint}; ${shown})`)) return
  for (const answer of outcome.answers) {
    const what = `${answer.url === '' ? '(no URL)' : answer.url} → ${String(answer.status)}, ` +
      `curl exit ${String(answer.exit)}`
    // Only an endless example is stopped, and only its last curl can be (a stream, or a long poll still waiting).
    const stopped = answer.exit === null && outcome.cut
    if (!stopped) {
      t.equal(answer.exit, 0,
        `curl exits 0: ${what}${answer.exit === 3 ? ' (3: a malformed URL, e.g. unencoded characters)' : ''}\n${shown}`)
    }
    if (answer.status === null) {
      t.ok(stopped, `an answer: ${what}`)
      continue
    }
    t.ok(answer.url.startsWith(`${origin}/`), `asks the started service only: ${answer.url}`)
    t.ok(answer.status < 500, `never a 5xx: ${what}`)
    // A documented status is the example's last answer's: the curls before it fetch what it needs (an ETag).
    if (example.expect.status !== undefined && answer === outcome.answers.at(-1)) {
      t.equal(answer.status, example.expect.status, `the status of ${example.expect.from}: ${what}`)
    } else t.ok(answer.status >= 200 && answer.status < 300, `a 2xx: ${what}\n${shown}`)
  }
  t.ok(outcome.stdout.trim() !== '', 'it prints something')
  if (example.prints !== undefined) {
    t.ok(outcome.stdout.includes(example.prints), `it prints what the doc says: ${example.prints}`)
  }
  if (!example.printsBody) return
  const type = outcome.answers.at(-1)?.type ?? ''
  if (type.startsWith('application/x-ndjson')) {
    const complete = outcome.stdout.slice(0, outcome.stdout.lastIndexOf('\n') + 1).split('\n')
      .filter((line) => line !== '')
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
    const errors = Array.isArray(body.errors)
      ? (body.errors as Array<Record<string, unknown>>).map(({ param, pointer, code }) => ({ param, pointer, code }))
      : body.errors
    t.same(errors, example.expect.errors, `the errors (param, pointer, code) of ${example.expect.from}`)
  }
}

// ---------------------------------------------------------------------------------------------

const files = await documents()
const found = new Map<string, Example[]>()
for (const file of files) found.set(file, extract(file, await readFile(path.join(ROOT, file), 'utf8')))

t.test('the docs hold their shell examples (read from the Markdown)', async (t) => {
  for (const [file, examples] of found) {
    t.comment(`${file}: ${examples.length} curl examples ` +
      `(${examples.filter((example) => example.expect.status !== undefined).length} with a documented error status, ` +
      `${examples.filter((example) => example.endless).length} endless, ` +
      `${examples.filter((example) => example.auth).length} with AUTH_MODE=jwt)`)
    t.ok(examples.length >= (AT_LEAST[file] ?? 0),
      `${file}: at least ${AT_LEAST[file] ?? 0} examples, found ${examples.length}`)
  }
  for (const file of Object.keys(AT_LEAST)) t.ok(found.has(file), `${file} is read`)
})

/** What every service the examples run is started with, besides its auth settings. */
const SERVICE_ENV = { MONGODB_URI: '', SHUTDOWN_DELAY_MS: '0', DEMO_WRITES: 'off' }

t.test('every example works against the service as npm start runs it', async (t) => {
  const all = [...found.values()].flat()
  const needsAuth = all.some((example) => example.auth)
  const services: ServiceProcess[] = []
  const start = async (env: Record<string, string>): Promise<ServiceProcess> => {
    // On loopback, on a port the system picks (startService: HOST=127.0.0.1, PORT=0), with the
    // embedded database and its demo data, whatever this shell's MONGODB_URI says.
    const service = await startService({ ...SERVICE_ENV, ...env })
    services.push(service)
    const ready = await untilReady(service.url, 15_000)
    if (ready === Infinity) throw new Error(`not ready within 15 s:\n${service.lines.join('\n')}`)
    return service
  }
  const begun = Date.now()
  // Both at once: the examples without tokens run while the JWT service starts.
  const open = start({ AUTH_MODE: 'none' })
  const jwt = { JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, JWT_PUBLIC_KEY: key.publicPem, JWT_ALGORITHMS: 'ES256' }
  const closed = needsAuth ? start({ AUTH_MODE: 'jwt', ...jwt }) : undefined
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
  const plain = all.filter((example) => !example.auth && runnable(example))
    .sort((a, b) => Number(b.endless) - Number(a.endless))
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
  const slowest = [...outcomes].sort((a, b) => b[1].outcome.ms - a[1].outcome.ms).slice(0, 3)
    .map(([example, { outcome }]) => `${example.doc}:${example.line} ${outcome.ms} ms`)
  t.comment(`services ready in ${listening} ms; ${outcomes.size} examples ran in ` +
    `${Date.now() - begun - listening} ms more (slowest: ${slowest.join(', ')})`)

  for (const example of all) {
    const name = `${example.doc}:${example.line} ${example.text.split('\n')[0]?.slice(0, 110) ?? ''}`
    const ran = outcomes.get(example)
    if (ran === undefined) {
      withoutTool(t, name, 'jq is not installed (the example pipes into jq)')
      continue
    }
    t.test(name, async (t) => { check(t, example, ran.outcome, ran.origin) })
  }

  // The feed loop of docs/changes.md, run again with the token a previous run saved, which the
  // service cannot read (signed with another key, as after a restart without CURSOR_SECRET).
  const loop = all.find((example) => example.doc === 'docs/changes.md' && /\bwhile\b/.test(unquoted(example.text)) &&
    example.text.includes('/changes'))
  const loopTest = 'the feed loop of docs/changes.md starts again without since when its saved token cannot be used'
  if (!jq) {
    withoutTool(t, loopTest, 'jq is not installed')
  } else {
    t.test(loopTest, async (t) => {
      if (!t.ok(loop, 'docs/changes.md has a feed loop')) return
      const saved = /\bcat (\S+)/.exec(loop?.text ?? '')?.[1]
      if (!t.ok(saved, 'it resumes from a token saved in a file')) return
      const dir = await mkdtemp(path.join(tmpdir(), 'shell-examples-loop-'))
      t.teardown(async () => await rm(dir, { recursive: true, force: true }))
      const foreign = new CursorCodec([randomBytes(32)])
        .encode({ path: 'another service', filter: '{}', sort: 'changes', fields: '*' }, [])
      await writeFile(path.join(dir, saved as string), `${foreign}\n`)
      // Stopped once the listing came and the loop saved the answer's token: what the test looks at.
      const tokenFile = path.join(dir, saved as string)
      const outcome = await run(loop as Example, origin, dir, () => false,
        (stdout) => stdout.includes('["upsert"') && readFileSync(tokenFile, 'utf8').trim() !== foreign)
      const shown = `\n--- stdout\n${outcome.stdout.slice(0, 2000)}\n--- stderr\n${outcome.stderr.slice(0, 2000)}`
      t.match(outcome.stdout, /^400 INVALID_CURSOR: .*start again without since/m, `it prints why${shown}`)
      t.match(outcome.stdout, /^starting again without since/m, 'and what it does')
      t.match(outcome.stdout, /^\["upsert","[0-9a-f]{24}",/m, 'then the listing comes')
      t.same(outcome.answers.slice(0, 2).map((answer) => answer.status), [400, 200], 'a 400, then a 200 without since')
      t.not((await readFile(tokenFile, 'utf8')).trim(), foreign, 'the new token is saved')
    })
  }

  t.test('the services stop cleanly on SIGTERM', async (t) => {
    for (const service of services) t.equal(await stop(service), 0, `${service.url} exits 0`)
  })
})

/**
 * The services' own bound on a shutdown (after it the exit is forced, with code 1), and scheduling
 * noise for this process to see the exit: the kill below only ends a process that outlives its own
 * bound, and a clean stop is told from a forced one by its exit code, not by how long it took.
 */
const STOP_BOUND_MS = shutdownBoundMs(readConfig(SERVICE_ENV)) + SLACK_MS

/** SIGTERM, then SIGKILL if it has not exited within STOP_BOUND_MS: its exit code ('killed' if it took the kill). */
async function stop (service: ServiceProcess): Promise<number | null | 'killed'> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM')
  let timer: NodeJS.Timeout | undefined
  const code = await Promise.race([service.exited,
    new Promise<'late'>((resolve) => { timer = setTimeout(() => resolve('late'), STOP_BOUND_MS) })])
  clearTimeout(timer)
  if (code !== 'late') return code
  service.child.kill('SIGKILL')
  await service.exited
  return 'killed'
}
