// The whole request path under load. The service and two floors (bench/floor.ts: JSON.stringify,
// and the driver's raw option with a schema-less BSON→JSON writer) each run in a process of their
// own, pinned to one core when `taskset` exists; the load generator and the database use the
// other. By default the database is a replay (bench/replay-database.ts): the mix's commands are
// recorded once against the real database (the stand-in, or MONGODB_URI) and then answered from
// memory, so that the figures are the service's, not the database's (`--database direct` skips it).
import { spawn, execSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createInterface, type Interface } from 'node:readline'
import { isDeepStrictEqual } from 'node:util'
import autocannon from 'autocannon'
import { MongoClient } from 'mongodb'
import { seedDemoData } from '../demo-data/seed.js'
import type { DriverFigure } from './driver-process.js'
import { buildGrowth, buildMix, type MixEntry } from './mix.js'
import { ENCODINGS } from '../plugins/compression.js'
import { benchCompressionLevels, type LevelFigure } from './compression.js'
import { median, spread, type Spread } from './timing.js'
import { benchStages, type StageFigure } from './stages.js'
import { imageCommand } from '../lib/image-command.js'
import type { GcFigures } from './gc-observer.js'
import { benchFeeds, type FeedsResult } from './feeds.js'

const DIST = new URL('../', import.meta.url)
const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim()) || 100
const TASKSET = ['/usr/bin/taskset', '/bin/taskset'].find((path) => existsSync(path))
/** The servers measured run on the last core; everything else (this process, the database) on the others. */
const SERVER_CORE = '1'
const OTHER_CORES = '0'

/** The parts of the HTTP benchmark, in the order they run. */
export const SECTIONS = ['mix', 'driver', 'growth', 'compression', 'stages', 'feeds'] as const
export type Section = typeof SECTIONS[number]

export interface HttpOptions { rounds: number, duration: number, connections: number, scale: number, database: 'replay' | 'direct', sections: ReadonlySet<Section>, baseline?: { dist: string, name: string } }

type Target = 'service' | 'floor' | 'raw floor' | 'baseline' | `stage: ${string}`

export interface RunFigure { target: Target, requests: number, rps: number, p50: number, p99: number, cpuUsPerRequest: number, errors: number, duration: number, gc?: GcFigures }

interface Server { target: Target, child: ChildProcess, url: string, lines: Interface }

export interface GrowthFigure { load: string, serviceCpuUs: number, floorCpuUs: number, ratio: Spread, serviceP99: number, floorP99: number }

export interface EncodingFigure { page: string, encoding: string, bytes: number, cpuUsPerRequest: number, cpuRatio: Spread, p99: number }

export interface HttpResult {
  database: { kind: string, reason: string, replay?: { recorded: number, hits: number, misses: number } }
  pinned: boolean
  mix?: { names: string[], warmUp: Record<string, number[]>, runs: RunFigure[], ratios: { cpu: Spread, p99: Spread, rps: Spread, rawFloorCpu: Spread } }
  growth?: GrowthFigure[]
  stages?: StageFigure[]
  driver?: DriverFigure[]
  compression?: { levels: LevelFigure[], encodings: EncodingFigure[] }
  feeds?: FeedsResult
  baseline?: BaselineFigure[]
}

/** This build against another (--baseline): one load at a time, interleaved, CPU per request and p99. */
export interface BaselineFigure { load: string, baselineName: string, serviceCpuUs: number, baselineCpuUs: number, cpu: Spread, p99: Spread, rps: Spread }

function spawnNode (script: string, env: NodeJS.ProcessEnv, cores: string | undefined, nodeArgs: string[]): ChildProcess {
  const args = [...nodeArgs, new URL(script, DIST).pathname]
  const [command, argv] = TASKSET !== undefined && cores !== undefined ? [TASKSET, ['-c', cores, process.execPath, ...args]] : [process.execPath, args]
  return spawn(command, argv, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] })
}

/** Starts a node process and resolves with it and the first stdout line that `match`es. */
async function start (script: string, env: NodeJS.ProcessEnv, match: RegExp, cores?: string, nodeArgs: string[] = []): Promise<{ child: ChildProcess, line: string, lines: Interface }> {
  const child = spawnNode(script, env, cores, nodeArgs)
  return await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => { if (match.test(line)) resolve({ child, line, lines }) })
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
  })
}

/** User + system CPU time of a process, in microseconds, from /proc (Linux). */
function cpuMicros (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
}

/** The pid doing the work: taskset execs node in place, so the child's own pid. */
const pidOf = (server: Server): number => server.child.pid as number

/**
 * One measured run. A server left idle while the others ran loses some of its optimized code,
 * so each run follows one unmeasured second of the same load.
 */
async function measure (server: Server, paths: string[], duration: number, connections: number, headers: Record<string, string> = {}): Promise<RunFigure> {
  await autocannon({ url: server.url, connections, duration: 1, requests: paths.map((path) => ({ method: 'GET', path, headers })) })
  return await run(server, paths, duration, connections, headers)
}

async function run (server: Server, paths: string[], duration: number, connections: number, headers: Record<string, string> = {}): Promise<RunFigure> {
  await gcFigures(server)
  const before = cpuMicros(pidOf(server))
  const result = await autocannon({ url: server.url, connections, duration, requests: paths.map((path) => ({ method: 'GET', path, headers })) })
  const cpu = cpuMicros(pidOf(server)) - before
  const gc = await gcFigures(server)
  const ok = result['2xx']
  return { target: server.target, requests: ok, rps: ok / duration, p50: result.latency.p50, p99: result.latency.p99, cpuUsPerRequest: cpu / Math.max(ok, 1), errors: result.non2xx + result.errors, duration, ...(gc === undefined ? {} : { gc }) }
}

/** The collector's pauses since the last call, from a server started with bench/gc-observer.js. */
async function gcFigures (server: Server): Promise<GcFigures | undefined> {
  const { lines, child } = server
  return await new Promise((resolve) => {
    // A server that no longer answers has no figures; the run itself reports its errors.
    const timer = setTimeout(() => { lines.off('line', read); resolve(undefined) }, 5000)
    function read (line: string): void {
      if (!line.startsWith('{"gc":')) return
      clearTimeout(timer)
      lines.off('line', read)
      resolve((JSON.parse(line) as { gc: GcFigures }).gc)
    }
    lines.on('line', read)
    child.stdin?.write('gc\n')
  })
}

/**
 * Loads a server in 2-second rounds until its CPU per request is stable: two rounds in a row
 * within 3 % of each other (a fresh process needs tens of seconds before its JIT settles), or
 * 15 rounds. Returns the CPU per request of each round.
 */
async function warmUp (server: Server, paths: string[], connections: number, headers: Record<string, string> = {}): Promise<number[]> {
  const seen: number[] = []
  for (let round = 0; round < 15; round++) {
    seen.push((await run(server, paths, 2, connections, headers)).cpuUsPerRequest)
    const [a, b] = seen.slice(-2)
    if (seen.length >= 3 && a !== undefined && b !== undefined && Math.abs(a - b) / b <= 0.03) break
  }
  return seen
}

async function body (url: string): Promise<unknown> {
  const res = await fetch(url)
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  const json = await res.json() as { next?: string }
  // The floors have no cursors: the documents, limit, skip and total must agree.
  delete json.next
  return json
}

export async function benchHttp (options: HttpOptions): Promise<HttpResult> {
  const children: ChildProcess[] = []
  try {
    if (TASKSET !== undefined) execSync(`${TASKSET} -cp ${OTHER_CORES} ${process.pid}`, { stdio: 'ignore' })
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
    await client.close()

    let replay: ChildProcess | undefined
    let uri = db.uri
    if (options.database === 'replay') {
      const started = await start('bench/replay-process.js', { UPSTREAM_URI: db.uri }, /"uri"/, OTHER_CORES)
      replay = started.child
      children.push(replay)
      uri = JSON.parse(started.line).uri
    }
    console.log(`database: ${db.kind} (${db.reason})${replay === undefined ? '' : ', recorded once and replayed from memory'}; servers ${TASKSET === undefined ? 'not pinned (no taskset)' : `pinned to core ${SERVER_CORE}`}`)

    const env = { MONGODB_URI: uri, MONGODB_DB: dbName, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1', CURSOR_SECRET: 'bench-only-cursor-secret-of-32-bytes!', SHUTDOWN_DELAY_MS: '0', AUTH_MODE: 'none' }
    // Every server measured counts its collector's pauses (bench/gc-observer.ts).
    const gcObserver = `--import=${new URL('bench/gc-observer.js', DIST).pathname}`
    const server = async (target: Target, script: string, extra: NodeJS.ProcessEnv, match: RegExp, url: RegExp, nodeArgs: string[] = []): Promise<Server> => {
      const { child, line, lines } = await start(script, { ...env, ...extra }, match, SERVER_CORE, [gcObserver, ...nodeArgs])
      children.push(child)
      return { target, child, url: url.exec(line)?.[1] as string, lines }
    }
    // The service runs with the image's node flags (Dockerfile `CMD`), as it is deployed;
    // BENCH_NODE_ARGS, after them, reaches the measured service only (e.g. --cpu-prof to profile
    // it). The floors run on node's defaults.
    const deployed = imageCommand(new URL('../Dockerfile', DIST)).nodeFlags
    console.log(`service: node ${deployed.join(' ')} dist/server.js`)
    const service = await server('service', 'server.js', { METRICS_PORT: String(await freePort()) }, /API at/, /API at (http:\/\/[^/]+)/, [...deployed, ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)])
    const floor = await server('floor', 'bench/floor.js', {}, /listening on/, /on (http:\/\/\S+)/)
    const rawFloor = await server('raw floor', 'bench/floor.js', { FLOOR_RAW: '1' }, /listening on/, /on (http:\/\/\S+)/)
    const servers = [service, floor, rawFloor]

    // Same driver calls, same answers: checked before anything is timed (and recorded, when replaying).
    for (const entry of [...mix, ...growth.pageSize, ...growth.inSize]) {
      const [first, ...others] = await Promise.all(servers.map(async (s) => await body(s.url + entry.path)))
      for (const [i, other] of others.entries()) {
        if (!isDeepStrictEqual(first, other)) throw new Error(`${servers[i + 1]?.target} and the service disagree on ${entry.name}`)
      }
    }
    // The driver's share of a page (bench/driver-process.ts), its queries recorded with the rest.
    const driver = options.sections.has('driver') ? await start('bench/driver-process.js', env, /^recorded$/, SERVER_CORE) : undefined
    if (driver !== undefined) children.push(driver.child)
    if (replay !== undefined) {
      replay.stdin?.write('replay\n')
      await new Promise((resolve) => replay.stdout?.once('data', resolve))
    }
    const result: HttpResult = { database: { kind: db.kind, reason: db.reason }, pinned: TASKSET !== undefined }
    if (driver !== undefined) {
      const figures = new Promise<DriverFigure[]>((resolve) => driver.lines.on('line', (line) => { if (line.startsWith('[')) resolve(JSON.parse(line)) }))
      driver.child.stdin?.write('go\n')
      result.driver = await figures
    }

    if (options.sections.has('mix')) {
      const mixPaths = mix.map((entry) => entry.path)
      const warm: Record<string, number[]> = {}
      for (const s of servers) warm[s.target] = await warmUp(s, mixPaths, options.connections)
      const runs: RunFigure[] = []
      for (let round = 0; round < options.rounds; round++) {
        // The order turns each round, so that no target always follows the same one.
        const order = [service, floor, rawFloor]
        for (let i = 0; i < round % 3; i++) order.push(order.shift() as Server)
        for (const s of order) runs.push(await measure(s, mixPaths, options.duration, options.connections))
      }
      const byRound = (target: Target): RunFigure[] => runs.filter((r) => r.target === target)
      const ratio = (a: Target, b: Target, key: 'cpuUsPerRequest' | 'p99' | 'rps'): Spread =>
        spread(byRound(a).map((run, i) => run[key] / (byRound(b)[i] as RunFigure)[key]))
      result.mix = {
        names: mix.map((m) => m.name),
        warmUp: warm,
        runs,
        ratios: { cpu: ratio('service', 'floor', 'cpuUsPerRequest'), p99: ratio('service', 'floor', 'p99'), rps: ratio('service', 'floor', 'rps'), rawFloorCpu: ratio('raw floor', 'floor', 'cpuUsPerRequest') }
      }
    }

    if (options.sections.has('growth')) {
      result.growth = []
      for (const entry of [...growth.pageSize, ...growth.inSize]) {
        // A new request shape is a new workload for the JIT: both are warmed on it until stable, as for the mix.
        await warmUp(service, [entry.path], options.connections)
        await warmUp(floor, [entry.path], options.connections)
        const pairs: Array<[RunFigure, RunFigure]> = []
        for (let round = 0; round < Math.max(3, Math.ceil(options.rounds / 2)); round++) {
          const a = await measure(service, [entry.path], Math.max(2, options.duration / 4), options.connections)
          const b = await measure(floor, [entry.path], Math.max(2, options.duration / 4), options.connections)
          pairs.push([a, b])
        }
        result.growth.push({
          load: entry.name,
          serviceCpuUs: median(pairs.map(([a]) => a.cpuUsPerRequest)),
          floorCpuUs: median(pairs.map(([, b]) => b.cpuUsPerRequest)),
          ratio: spread(pairs.map(([a, b]) => a.cpuUsPerRequest / b.cpuUsPerRequest)),
          serviceP99: median(pairs.map(([a]) => a.p99)),
          floorP99: median(pairs.map(([, b]) => b.p99))
        })
      }
    }

    if (options.sections.has('compression')) {
      // The pages of 20, 100 and 1,000 documents as the service sends them to a client asking for
      // each encoding, CPU per request against the same page sent as it is, interleaved.
      const pages = growth.pageSize.filter((entry) => entry.limit >= 20)
      const identities = await Promise.all(pages.map(async (entry) => ({ name: entry.name, body: (await rawBody(service.url + entry.path, 'identity')).body })))
      const encodings: EncodingFigure[] = []
      for (const entry of pages) {
        const offered = ['identity', ...ENCODINGS]
        const cpu = new Map<string, number[]>(offered.map((encoding) => [encoding, []]))
        const p99 = new Map<string, number[]>(offered.map((encoding) => [encoding, []]))
        for (const encoding of offered) await warmUp(service, [entry.path], options.connections, { 'accept-encoding': encoding })
        for (let round = 0; round < Math.max(3, Math.ceil(options.rounds / 2)); round++) {
          for (const encoding of offered) {
            const figure = await measure(service, [entry.path], Math.max(2, options.duration / 4), options.connections, { 'accept-encoding': encoding })
            cpu.get(encoding)?.push(figure.cpuUsPerRequest)
            p99.get(encoding)?.push(figure.p99)
          }
        }
        const identity = cpu.get('identity') as number[]
        for (const encoding of offered) {
          const { bytes, encoding: sent } = await rawBody(service.url + entry.path, encoding)
          if (sent !== (encoding === 'identity' ? undefined : encoding)) throw new Error(`${entry.name}: asked for ${encoding}, got ${sent ?? 'identity'}`)
          const runs = cpu.get(encoding) as number[]
          encodings.push({ page: entry.name, encoding, bytes, cpuUsPerRequest: median(runs), cpuRatio: spread(runs.map((x, i) => x / (identity[i] as number))), p99: median(p99.get(encoding) as number[]) })
        }
      }
      result.compression = { levels: benchCompressionLevels(identities), encodings }
    }

    if (options.sections.has('stages')) {
      // The price of each optional stage on a 1-document page (bench/stages.ts).
      const onePage = growth.pageSize[0]?.path as string
      const firstId = ((await body(service.url + onePage)) as { data: Array<{ _id: string }> }).data[0]?._id as string
      result.stages = await benchStages<Server>({
        service: async (name, extra) => await server(`stage: ${name}`, 'server.js', { METRICS_PORT: '0', ...extra }, /API at/, /API at (http:\/\/[^/]+)/, deployed),
        freePort,
        measure: async (s, paths, headers, long) => await measure(s, paths, long === true ? options.duration : Math.max(2, options.duration / 2), options.connections, headers),
        warmUp: async (s, paths, headers) => await warmUp(s, paths, options.connections, headers),
        rounds: Math.max(3, options.rounds)
      }, { withCursor: onePage, plain: `${onePage.split('?')[0] as string}?filter=${encodeURIComponent(JSON.stringify({ _id: firstId }))}&limit=1`, mix: mix.map((entry) => entry.path) })
    }

    if (options.sections.has('feeds')) {
      // A service of its own against the database itself: a replay cannot answer change streams.
      const metricsPort = await freePort()
      const feedService = await server('service', 'server.js', { MONGODB_URI: db.uri, METRICS_PORT: String(metricsPort), CHANGES_MAX_WAITING: '2000' }, /API at/, /API at (http:\/\/[^/]+)/, deployed)
      const mixPaths = mix.map((entry) => entry.path)
      await warmUp(feedService, mixPaths, options.connections)
      result.feeds = await benchFeeds({
        url: feedService.url,
        pid: pidOf(feedService),
        metricsUrl: `http://127.0.0.1:${metricsPort}`,
        databaseUri: db.uri,
        databaseName: dbName,
        mixPaths,
        rounds: Math.max(3, options.rounds),
        measure: async (paths) => await measure(feedService, paths, options.duration, options.connections),
        cpuMicros
      })
    }

    if (options.baseline !== undefined) {
      // Another build of the service (its dist/), with the same flags, database and load: the mix
      // and the 1-document page, each in interleaved rounds against this build.
      console.log(`baseline: node ${deployed.join(' ')} ${options.baseline.dist}/server.js (${options.baseline.name})`)
      const baseline = await server('baseline', `${options.baseline.dist}/server.js`, { METRICS_PORT: String(await freePort()) }, /API at/, /API at (http:\/\/[^/]+)/, deployed)
      const loads = [{ name: 'the query mix', paths: mix.map((entry) => entry.path) }, { name: (growth.pageSize[0] as MixEntry).name, paths: [(growth.pageSize[0] as MixEntry).path] }]
      result.baseline = []
      for (const load of loads) {
        await warmUp(service, load.paths, options.connections)
        await warmUp(baseline, load.paths, options.connections)
        const pairs: Array<[RunFigure, RunFigure]> = []
        for (let round = 0; round < Math.max(3, options.rounds); round++) {
          const order = round % 2 === 0 ? [service, baseline] : [baseline, service]
          const [first, second] = [await measure(order[0] as Server, load.paths, options.duration, options.connections), await measure(order[1] as Server, load.paths, options.duration, options.connections)]
          pairs.push(round % 2 === 0 ? [first, second] : [second, first])
        }
        result.baseline.push({
          load: load.name,
          baselineName: options.baseline.name,
          serviceCpuUs: median(pairs.map(([a]) => a.cpuUsPerRequest)),
          baselineCpuUs: median(pairs.map(([, b]) => b.cpuUsPerRequest)),
          cpu: spread(pairs.map(([a, b]) => a.cpuUsPerRequest / b.cpuUsPerRequest)),
          p99: spread(pairs.map(([a, b]) => a.p99 / b.p99)),
          rps: spread(pairs.map(([a, b]) => a.rps / b.rps))
        })
      }
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

/** The answer's body as sent (compressed or not) and its Content-Encoding. */
async function rawBody (url: string, encoding: string): Promise<{ body: Buffer, bytes: number, encoding: string | undefined }> {
  const { get } = await import('node:http')
  return await new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': encoding } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => {
        const body = Buffer.concat(chunks)
        resolve({ body, bytes: body.length, encoding: res.headers['content-encoding'] })
      })
    }).on('error', reject)
  })
}

/** A free loopback port for the metrics listener. */
async function freePort (): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}
