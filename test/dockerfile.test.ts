// The Dockerfile's facts, checked without a Docker engine: its base images, its hardening, that
// every path its runtime stage copies exists after a build, and that those files alone, with
// production dependencies only (`npm ci --omit=dev --ignore-scripts`), start and serve with
// NODE_ENV=production. docs/deployment.md's description of the image is held to the same facts.
import { execFile, execFileSync, spawn } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { testDatabase, uniqueDatabaseName } from './helpers/database.js'
import { expectReady, listening } from './faults/service-process.js'
import { imageCommand } from '../lib/image-command.js'
import { NODE, nodeArgs, npmArgs } from './helpers/node-child.js'

t.setTimeout(300_000)
const run = promisify(execFile)
const ROOT = path.join(import.meta.dirname, '..')
const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8')
const readme = await readFile(path.join(ROOT, 'docs', 'deployment.md'), 'utf8')

interface Stage { from: string, name?: string, lines: string[] }

/** The stages, each with its instructions (continuation lines joined, comments dropped). */
function stages (text: string): Stage[] {
  const instructions = text.replace(/\\\n\s*/g, ' ').split('\n').map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
  const out: Stage[] = []
  for (const line of instructions) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line)
    if (from !== null) out.push({ from: from[1] as string, name: from[2], lines: [] })
    else out.at(-1)?.lines.push(line)
  }
  return out
}

const all = stages(dockerfile)
const runtime = all.at(-1) as Stage
/** The runtime's command (exec form) and the node flags in it, as the benchmark and the fault tests read them. */
const { command, nodeFlags } = imageCommand(path.join(ROOT, 'Dockerfile'))
/** `COPY --from=build <sources…> <destination>` of the runtime stage, as [source in /app, destination] pairs. */
const fromBuild = runtime.lines.filter((line) => line.startsWith('COPY --from=build ')).flatMap((line) => {
  const words = line.split(/\s+/).slice(2)
  const destination = words.pop() as string
  return words.map((source) => [source.replace(/^\/app\//, ''), destination] as const)
})

t.test('Node 24 LTS in every stage; install scripts never run', async (t) => {
  t.ok(all.length >= 2, 'a multi-stage build')
  for (const stage of all) t.match(stage.from, /^node:24(\.|-)/, `${stage.name ?? 'runtime'} is on Node 24`)
  const installs = all.flatMap((stage) => stage.lines).filter((line) => /\bnpm (ci|install)\b/.test(line))
  t.ok(installs.length >= 2)
  for (const line of installs) t.match(line, /--ignore-scripts/, line)
  t.match(installs.find((line) => line.includes('--omit=dev')) ?? '', /npm ci --omit=dev/,
    'production dependencies from the lock file')
})

t.test('the runtime stage: root-owned read-only files, non-root user, production, health check, labels', async (t) => {
  t.notOk(runtime.lines.some((line) => line.startsWith('COPY') && line.includes('--chown')),
    'files stay owned by root (the process cannot rewrite its code)')
  t.ok(runtime.lines.includes('USER node'), 'runs as node')
  t.ok(
    runtime.lines.findIndex((line) => line.startsWith('USER')) >
      runtime.lines.findLastIndex((line) => line.startsWith('COPY') || line.startsWith('RUN')),
    'USER comes after every COPY and RUN'
  )
  t.match(runtime.lines.find((line) => line.startsWith('ENV')) ?? '', /NODE_ENV=production/)
  t.match(runtime.lines.find((line) => line.startsWith('HEALTHCHECK')) ?? '', /\/health/)
  t.same(runtime.lines.filter((line) => line.startsWith('CMD ')).map((line) => JSON.parse(line.slice(4))), [command],
    'the command is the runtime stage\'s, in exec form')
  t.same(command.at(0), 'node', 'node itself is PID 1\'s program, no npm')
  t.same(command.at(-1), 'dist/server.js')
  const labels = runtime.lines.filter((line) => line.startsWith('LABEL')).join(' ')
  for (const key of ['title', 'description', 'version', 'revision', 'licenses', 'source']) {
    t.match(labels, `org.opencontainers.image.${key}=`, key)
  }
  for (const left of ['bench', 'offline-mongodb', 'demo-data', 'test']) {
    t.notOk(fromBuild.some(([source]) => source.startsWith(`dist/${left}`)), `no ${left} in the image`)
  }
})

t.test('npm start and npm run start:dist give node the flags the image gives it', async (t) => {
  t.ok(nodeFlags.length > 0, `the image sets ${nodeFlags.join(' ')}`)
  for (const flag of nodeFlags) t.match(flag, /^--[a-z-]+(?:=\S+)?$/, flag)
  t.ok(nodeFlags.includes('--no-allocation-site-pretenuring'),
    'pretenuring is off from the command line, never set once the process runs')
  const { scripts, tap } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>, tap: { 'node-arg': string[] }
  }
  // exec: the shell npm runs a script in gives way to the service,
  // which gets npm's signals (test/process/npm-start.test.ts).
  t.equal(scripts['start:dist'], ['exec', 'node', ...nodeFlags, 'dist/server.js'].join(' '))
  // tsx's loader, not its CLI: the CLI relays a signal to a child process and kills that child
  // when it does not answer within tens of milliseconds: a busy service would end undrained.
  t.equal(scripts.start,
    ['FASTIFY_AUTOLOAD_TYPESCRIPT=1', 'exec', 'node', '--import', 'tsx', ...nodeFlags, 'server.ts'].join(' '))
  // One flag more in the test processes: the offline stand-in they run beside the app bounds its
  // regex tests with a V8 native that needs it (offline-mongodb/regex.ts); it only lets code
  // written with `%` calls be parsed, and the service has none (checked below).
  t.same(tap['node-arg'].filter((arg) => !arg.startsWith('--import') && arg !== '--allow-natives-syntax'), nodeFlags,
    'the tests build the app in processes with the same flags')
  t.ok(tap['node-arg'].includes('--allow-natives-syntax'), 'the stand-in in the test processes bounds its regex tests')
  t.match(scripts.db, /^tsx --allow-natives-syntax /, 'npm run db: the flag on the command line')
  const allFiles = execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n')
    .filter((file) => file !== '')
  const setting: string[] = []
  for (const file of allFiles.filter((file) => !/^(client\/)?test\//.test(file))) {
    if ((await readFile(path.join(ROOT, file), 'utf8')).includes('setFlagsFromString')) setting.push(file)
  }
  t.same(setting, [],
    'no V8 flag is set at run time: not by the service, the embedded database, the benchmark or the client')
  // The service's own code, that is everything but the embedded database, the tests and the benchmark.
  const files = allFiles.filter((file) => !/^(offline-mongodb|test|bench|client)\//.test(file))
  t.ok(files.includes('server.ts'))
  const natives: string[] = []
  for (const file of files) {
    if (/%[A-Z][A-Za-z]+\(/.test(await readFile(path.join(ROOT, file), 'utf8'))) natives.push(file)
  }
  t.same(natives, [], 'no V8 native call in the service')
})

t.test('V8 still has the image\'s flags, with the meaning they were measured with', async (t) => {
  // What each flag is for (docs/architecture.md, "Reaching into dependencies"), in V8's own words:
  // a flag renamed or redefined fails here, not silently in production.
  const meanings: Record<string, string> = {
    'max-semi-space-size': 'max size of a semi-space (in MBytes)',
    'heap-growing-percent': 'specifies heap growing factor as (1 + heap_growing_percent/100)',
    'allocation-site-pretenuring': 'pretenure with allocation sites'
  }
  const help = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' })
  for (const flag of nodeFlags) {
    const name = flag.replace(/^--(no-)?/, '').replace(/=.*$/, '')
    t.ok(name in meanings, `${flag}: its meaning is held here`)
    t.ok(help.includes(`  --${name} (${meanings[name] ?? '?'}`), `${flag}: V8 says ${meanings[name] ?? '?'}`)
  }
})

t.test('.dockerignore keeps secrets and local dependencies out of the build context', async (t) => {
  const ignored = (await readFile(path.join(ROOT, '.dockerignore'), 'utf8')).split('\n').map((line) => line.trim())
  for (const entry of ['node_modules', 'dist', '.git', '.dev-keys', '.env', '*.pem', 'test']) {
    t.ok(ignored.includes(entry), entry)
  }
})

t.test('docs/deployment.md describes this image', async (t) => {
  const section = readme.slice(readme.indexOf('## Docker'), readme.indexOf('\n## ', readme.indexOf('## Docker') + 3))
  t.ok(section.includes(runtime.from), `names the base image ${runtime.from}`)
  for (const fact of ['--ignore-scripts', 'NODE_ENV=production', 'HEALTHCHECK', 'root', '`node` user']) {
    t.ok(section.includes(fact), fact)
  }
  for (const [source] of fromBuild) t.ok(section.includes(`\`${source.replace(/^dist\//, '')}`), `lists ${source}`)
})

t.test('the copied files start with production dependencies only, and serve', async (t) => {
  const work = await mkdtemp(path.join(tmpdir(), 'image-'))
  t.teardown(async () => await rm(work, { recursive: true, force: true }))
  // The build stage's `npm run build`, into a directory of our own. Without source maps: the
  // coverage of this process would otherwise be mapped onto the sources and merged, wrongly,
  // with the coverage of the TypeScript run (c8 follows child processes). Without the type
  // check, which emits nothing, is much of tsc's time, and is `npm run build`'s and `npm run lint`'s.
  await run(NODE, nodeArgs([
    path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', ROOT, '--outDir',
    path.join(work, 'build', 'dist'), '--sourceMap', 'false', '--noCheck'
  ], { coverage: false }), { cwd: ROOT })
  const app = path.join(work, 'app')
  for (const file of ['package.json', 'package-lock.json']) await cp(path.join(ROOT, file), path.join(app, file))
  for (const [source, destination] of fromBuild) {
    const from = path.join(work, 'build', source)
    t.ok(await stat(from).then(() => true, () => false), `${source} exists after the build`)
    const to = destination.endsWith('/')
      ? path.join(app, destination, path.basename(source))
      : path.join(app, destination)
    await cp(from, to, { recursive: true })
  }
  await run(NODE, npmArgs(['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund']),
    { cwd: app, maxBuffer: 1 << 24 })

  const { uri } = await testDatabase()
  const child = spawn(NODE, nodeArgs([...nodeFlags, 'dist/server.js']), {
    cwd: app,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      MONGODB_URI: uri,
      MONGODB_DB: uniqueDatabaseName(),
      AUTH_MODE: 'none',
      CURSOR_SECRET: 'a-test-cursor-secret-of-32-bytes!!',
      HOST: '127.0.0.1',
      PORT: '0',
      METRICS_PORT: '0',
      SHUTDOWN_DELAY_MS: '0'
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const { url, exited } = await listening(child)
  t.equal((await fetch(`${url}/health`)).status, 200)
  // Traffic comes once /ready says so (first ping, warm pool, event loop not lagging): before
  // that, a list may rightly be 503 with Retry-After (a busy machine lags the event loop).
  await expectReady(t, url, 30_000)
  const list = await fetch(`${url}/projects?limit=1`)
  const body = await list.text()
  t.equal(list.status, 200, `a list answers: ${body.slice(0, 300)}`)
  t.match(JSON.parse(body), { data: [], limit: 1 })
  child.kill('SIGTERM')
  t.equal(await exited, 0, 'exits 0 on SIGTERM')
})
