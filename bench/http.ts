// The whole request path under load. The service and two floors (bench/floor.ts: JSON.stringify,
// and the driver's raw option with a schema-less BSON→JSON writer) each run in a process of their
// own, pinned to the last core when `taskset` exists and there is more than one core; the load
// generator and the database use the others. By default the database is a replay
// (bench/replay-database.ts): the mix's commands are recorded once against the real database (the
// stand-in, or MONGODB_URI) and then answered from memory, so that the figures are the service's,
// not the database's (`--database direct` skips it).
import { spawn, execSync, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { createInterface, type Interface } from 'node:readline'
import { isDeepStrictEqual } from 'node:util'
import { MongoClient } from 'mongodb'
import { seedDemoData } from '../demo-data/seed.js'
import { imageCommand } from '../lib/image-command.js'
import type { DriverFigure } from './driver-process.js'
import type { SectionContext } from './http-context.js'
import { benchEncodings } from './http-encodings.js'
import { benchGrowth } from './http-growth.js'
import { benchMix } from './http-mix.js'
import type { HttpOptions, HttpResult, Server, Target } from './http-types.js'
import { body } from './load.js'
import { benchLanguage, languagePairs } from './http-language.js'
import { buildGrowth, buildLanguage, buildMix, type MixEntry } from './mix.js'
import {
  baselineSection, conditionalSection, feedsSection, freePort, stagesSection, type RunContext
} from './http-sections.js'

const DIST = new URL('../', import.meta.url)
const CORES = availableParallelism()
/** taskset, when there is more than one core to pin apart; else nothing is pinned. */
const TASKSET = CORES > 1 ? ['/usr/bin/taskset', '/bin/taskset'].find((path) => existsSync(path)) : undefined
/** The servers measured run on the last core; everything else (this process, the database) on the others. */
const SERVER_CORE = String(CORES - 1)
const OTHER_CORES = CORES > 2 ? `0-${CORES - 2}` : '0'

export { SECTIONS, type Section } from './http-types.js'

function spawnNode (
  script: string, env: NodeJS.ProcessEnv, cores: string | undefined, nodeArgs: string[]
): ChildProcess {
  const args = [...nodeArgs, new URL(script, DIST).pathname]
  const [command, argv] = TASKSET !== undefined && cores !== undefined
    ? [TASKSET, ['-c', cores, process.execPath, ...args]]
    : [process.execPath, args]
  return spawn(command, argv, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] })
}

/** Starts a node process and resolves with it and the first stdout line that `match`es. */
async function start (
  script: string, env: NodeJS.ProcessEnv, match: RegExp, cores?: string, nodeArgs: string[] = []
): Promise<{ child: ChildProcess, line: string, lines: Interface }> {
  const child = spawnNode(script, env, cores, nodeArgs)
  return await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => { if (match.test(line)) resolve({ child, line, lines }) })
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
  })
}

/**
 * The database (the stand-in in a process of its own, unless MONGODB_URI is set) with the demo
 * data, the loads built from it, and its replay unless `--database direct`.
 */
async function openDatabase (options: HttpOptions, children: ChildProcess[]) {
  let db = { uri: process.env.MONGODB_URI ?? '', kind: 'external', reason: 'MONGODB_URI is set' }
  if (process.env.MONGODB_URI === undefined) {
    // The stand-in's regex bound needs this flag on its command line (offline-mongodb/regex.ts).
    const database = await start('bench/database-process.js', {}, /^\{/, OTHER_CORES, ['--allow-natives-syntax'])
    children.push(database.child)
    db = JSON.parse(database.line)
  }
  const dbName = process.env.MONGODB_DB ?? 'listing'
  const client = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 5000 }).connect()
  if (db.kind !== 'external') await seedDemoData(db.uri, dbName, { scale: options.scale })
  const mix = await buildMix(client.db(dbName))
  const growth = await buildGrowth(client.db(dbName))
  const language = await buildLanguage(client.db(dbName))
  await client.close()
  let replay: ChildProcess | undefined
  let uri = db.uri
  if (options.database === 'replay') {
    const started = await start('bench/replay-process.js', { UPSTREAM_URI: db.uri }, /"uri"/, OTHER_CORES)
    replay = started.child
    children.push(replay)
    uri = JSON.parse(started.line).uri
  }
  return { db, dbName, uri, replay, mix, growth, language }
}

/** Same driver calls, same answers: checked before anything is timed (and recorded, when replaying). */
async function checkAgreement (servers: Server[], entries: MixEntry[]): Promise<void> {
  for (const entry of entries) {
    const [first, ...others] = await Promise.all(servers.map(async (s) => await body(s.url + entry.path)))
    for (const [i, other] of others.entries()) {
      if (!isDeepStrictEqual(first, other)) {
        throw new Error(`${servers[i + 1]?.target} and the service disagree on ${entry.name}`)
      }
    }
  }
}

export async function benchHttp (options: HttpOptions): Promise<HttpResult> {
  const children: ChildProcess[] = []
  try {
    if (TASKSET !== undefined) execSync(`${TASKSET} -cp ${OTHER_CORES} ${process.pid}`, { stdio: 'ignore' })
    const { db, dbName, uri, replay, mix, growth, language } = await openDatabase(options, children)
    console.log(`database: ${db.kind} (${db.reason})` +
      `${replay === undefined ? '' : ', recorded once and replayed from memory'}; ` +
      `servers ${TASKSET === undefined ? 'not pinned (no taskset, or one core)' : `pinned to core ${SERVER_CORE}`}`)

    const env = {
      MONGODB_URI: uri,
      MONGODB_DB: dbName,
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      CURSOR_SECRET: 'bench-only-cursor-secret-of-32-bytes!',
      SHUTDOWN_DELAY_MS: '0',
      AUTH_MODE: 'none'
    }
    // Every server measured counts its collector's pauses (bench/gc-observer.ts).
    const gcObserver = `--import=${new URL('bench/gc-observer.js', DIST).pathname}`
    const server = async (
      target: Target, script: string, extra: NodeJS.ProcessEnv, match: RegExp, url: RegExp, nodeArgs: string[] = []
    ): Promise<Server> => {
      const { child, line, lines } =
        await start(script, { ...env, ...extra }, match, SERVER_CORE, [gcObserver, ...nodeArgs])
      children.push(child)
      return { target, child, url: url.exec(line)?.[1] as string, lines }
    }
    // The service runs with the image's node flags (Dockerfile `CMD`), as it is deployed;
    // BENCH_NODE_ARGS, after them, reaches the measured service only (e.g. --cpu-prof to profile
    // it). The floors run on node's defaults.
    const deployed = imageCommand(new URL('../Dockerfile', DIST)).nodeFlags
    console.log(`service: node ${deployed.join(' ')} dist/server.js`)
    const serviceArgs = [...deployed, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)]
    const service = await server('service', 'server.js', { METRICS_PORT: String(await freePort()) },
      /API at/, /API at (http:\/\/[^/]+)/, serviceArgs)
    const floor = await server('floor', 'bench/floor.js', {}, /listening on/, /on (http:\/\/\S+)/)
    const rawFloor =
      await server('raw floor', 'bench/floor.js', { FLOOR_RAW: '1' }, /listening on/, /on (http:\/\/\S+)/)
    const servers = [service, floor, rawFloor]
    // The language section's byte-order service, started now so that its commands are recorded too.
    const simple = options.sections.has('language')
      ? await server('service in byte order', 'server.js', { METRICS_PORT: '0', COLLATION: 'simple' },
        /API at/, /API at (http:\/\/[^/]+)/, deployed)
      : undefined
    const pairs = simple === undefined ? [] : languagePairs({ service }, simple, language)
    for (const { a, b } of pairs) for (const { server: s, path } of [a, b]) await body(s.url + path)

    await checkAgreement(servers, [...mix, ...growth.pageSize, ...growth.inSize])
    // The driver's share of a page (bench/driver-process.ts), its queries recorded with the rest.
    const driver = options.sections.has('driver')
      ? await start('bench/driver-process.js', env, /^recorded$/, SERVER_CORE)
      : undefined
    if (driver !== undefined) children.push(driver.child)
    if (replay !== undefined) {
      replay.stdin?.write('replay\n')
      await new Promise((resolve) => replay.stdout?.once('data', resolve))
    }
    const result: HttpResult = { database: { kind: db.kind, reason: db.reason }, pinned: TASKSET !== undefined }
    if (driver !== undefined) {
      const figures = new Promise<DriverFigure[]>((resolve) => driver.lines.on('line', (line) => {
        if (line.startsWith('[')) resolve(JSON.parse(line))
      }))
      driver.child.stdin?.write('go\n')
      result.driver = await figures
    }

    const sections: SectionContext = { options, service, floor, rawFloor, mix, growth }
    if (options.sections.has('mix')) result.mix = await benchMix(sections)
    if (options.sections.has('growth')) result.growth = await benchGrowth(sections)
    if (pairs.length > 0) result.language = await benchLanguage(sections, pairs)
    if (options.sections.has('compression')) result.compression = await benchEncodings(sections)

    const run: RunContext = {
      ...sections, database: { uri: db.uri, name: dbName }, deployed, serviceArgs, start: server
    }
    if (options.sections.has('stages')) result.stages = await stagesSection(run)
    if (options.sections.has('feeds')) result.feeds = await feedsSection(run)
    if (options.sections.has('conditional')) result.conditional = await conditionalSection(run)
    if (options.baseline !== undefined && options.sections.has('baseline')) {
      result.baseline = await baselineSection(run, options.baseline)
    }

    if (replay !== undefined) {
      replay.stdin?.write('stats\n')
      result.database.replay = JSON.parse(String(await new Promise((resolve) => replay.stdout?.once('data', resolve))))
    }
    return result
  } finally {
    // Each process is waited for, so that none is left writing to a closed pipe (the service drains first).
    for (const child of children.reverse()) {
      if (child.exitCode !== null) continue
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))])
    }
  }
}
