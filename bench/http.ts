// The whole request path under load: the service and the floor, each in its own process,
// against the same database (in a third process), interleaved A B A B… with autocannon here.
import { spawn, execSync, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { isDeepStrictEqual } from 'node:util'
import autocannon from 'autocannon'
import { MongoClient } from 'mongodb'
import { seedDemoData } from '../demo-data/seed.js'
import { buildMix, type MixEntry } from './mix.js'
import { median } from './timing.js'

const DIST = new URL('../', import.meta.url)
const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim()) || 100

export interface HttpOptions { pairs: number, duration: number, connections: number, scale: number }

export interface RunFigure { target: 'service' | 'floor', requests: number, rps: number, p50: number, p99: number, cpuUsPerRequest: number, errors: number }

/** Starts a node process and resolves with it and the first stdout line that `match`es. */
function start (script: string, env: NodeJS.ProcessEnv, match: RegExp): Promise<{ child: ChildProcess, line: string }> {
  const child = spawn(process.execPath, [new URL(script, DIST).pathname], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.on('line', (line) => { if (match.test(line)) resolve({ child, line }) })
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
  })
}

/** User + system CPU time of a process, in microseconds, from /proc (Linux). */
function cpuMicros (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
}

async function load (url: string, mix: MixEntry[], duration: number, connections: number) {
  return await autocannon({ url, connections, duration, requests: mix.map((entry) => ({ method: 'GET', path: entry.path })) })
}

async function measure (target: RunFigure['target'], child: ChildProcess, url: string, mix: MixEntry[], options: HttpOptions): Promise<RunFigure> {
  const before = cpuMicros(child.pid as number)
  const result = await load(url, mix, options.duration, options.connections)
  const cpu = cpuMicros(child.pid as number) - before
  const ok = result['2xx']
  return { target, requests: ok, rps: ok / options.duration, p50: result.latency.p50, p99: result.latency.p99, cpuUsPerRequest: cpu / Math.max(ok, 1), errors: result.non2xx + result.errors }
}

export interface PagingFigure { page: string, serviceCpuUsPerRequest: number, databaseCpuUsPerRequest?: number, p50: number }

export interface MetricsCost { on: number, off: number, ratio: { median: number, min: number, max: number } }

export interface HttpResult { database: { kind: string, reason: string }, mix: string[], runs: RunFigure[], ratios: Record<'cpu' | 'p99' | 'rps', { median: number, min: number, max: number }>, paging: PagingFigure[], metrics: MetricsCost }

/** A free loopback port for the metrics listener. */
async function freePort (): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * Deep pages: page 1, the page after `depth` documents reached with a cursor, and the same
 * page reached with skip, loaded in turn (rounds interleaved); CPU per request of the service
 * and, when it is ours, of the database process.
 */
async function benchPaging (serviceUrl: string, service: ChildProcess, database: ChildProcess | undefined, base: string, options: HttpOptions, depth = 900): Promise<PagingFigure[]> {
  let cursorUrl = `${base}&limit=100`
  for (let read = 0; read < depth; read += 100) {
    const link = (await fetch(serviceUrl + cursorUrl)).headers.get('link') ?? ''
    cursorUrl = (/^<http:\/\/[^/]+([^>]+)>/.exec(link)?.[1] ?? '').replace('limit=100', 'limit=20')
  }
  const pages = { 'page 1': `${base}&limit=20`, [`cursor after ${depth}`]: cursorUrl, [`skip ${depth}`]: `${base}&limit=20&skip=${depth}` }
  const figures = new Map<string, PagingFigure[]>()
  for (let round = 0; round < options.pairs; round++) {
    for (const [page, path] of Object.entries(pages)) {
      const serviceBefore = cpuMicros(service.pid as number)
      const databaseBefore = database === undefined ? 0 : cpuMicros(database.pid as number)
      const result = await autocannon({ url: serviceUrl + path, connections: options.connections, duration: Math.max(2, options.duration / 2) })
      const ok = Math.max(result['2xx'], 1)
      const figure: PagingFigure = { page, serviceCpuUsPerRequest: (cpuMicros(service.pid as number) - serviceBefore) / ok, p50: result.latency.p50 }
      if (database !== undefined) figure.databaseCpuUsPerRequest = (cpuMicros(database.pid as number) - databaseBefore) / ok
      figures.set(page, [...(figures.get(page) ?? []), figure])
    }
  }
  return [...figures.entries()].map(([page, runs]) => ({
    page,
    serviceCpuUsPerRequest: median(runs.map((r) => r.serviceCpuUsPerRequest)),
    ...(database === undefined ? {} : { databaseCpuUsPerRequest: median(runs.map((r) => r.databaseCpuUsPerRequest ?? 0)) }),
    p50: median(runs.map((r) => r.p50))
  }))
}

export async function benchHttp (options: HttpOptions): Promise<HttpResult> {
  const children: ChildProcess[] = []
  try {
    let db = { uri: process.env.MONGODB_URI ?? '', kind: 'external', reason: 'MONGODB_URI is set' }
    let databaseChild: ChildProcess | undefined
    if (process.env.MONGODB_URI === undefined) {
      const database = await start('bench/database-process.js', {}, /^\{/)
      children.push(database.child)
      databaseChild = database.child
      db = JSON.parse(database.line)
    }
    const dbName = process.env.MONGODB_DB ?? 'listing'
    console.log(`database: ${db.kind} (${db.reason})`)

    const client = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 5000 }).connect()
    if (db.kind !== 'external') await seedDemoData(db.uri, dbName, { scale: options.scale })
    const mix = await buildMix(client.db(dbName))
    const project = await client.db(dbName).collection('projects').findOne({}, { sort: { _id: 1 } })
    await client.close()

    const env = { MONGODB_URI: db.uri, MONGODB_DB: dbName, NODE_ENV: 'production', PORT: '0', CURSOR_SECRET: 'bench-only-cursor-secret-of-32-bytes!', SHUTDOWN_DELAY_MS: '0', AUTH_MODE: 'none' }
    const service = await start('server.js', { ...env, HOST: '127.0.0.1', METRICS_PORT: String(await freePort()) }, /API at/)
    const serviceUrl = /API at (http:\/\/[^/]+)/.exec(service.line)?.[1] as string
    const floor = await start('bench/floor.js', env, /floor listening on/)
    const floorUrl = /on (http:\/\/\S+)/.exec(floor.line)?.[1] as string
    children.push(service.child, floor.child)

    // Same driver calls, same answers: checked before anything is timed.
    for (const entry of mix) {
      const [a, b] = await Promise.all([serviceUrl, floorUrl].map(async (base) => await (await fetch(base + entry.path)).json()))
      // The floor has no cursors: the documents, limit, skip and total must agree.
      delete (a as { next?: string }).next
      if (!isDeepStrictEqual(a, b)) throw new Error(`service and floor disagree on ${entry.name}`)
    }

    await load(serviceUrl, mix, 2, options.connections)
    await load(floorUrl, mix, 2, options.connections)
    const runs: RunFigure[] = []
    for (let pair = 0; pair < options.pairs; pair++) {
      runs.push(await measure('service', service.child, serviceUrl, mix, options))
      runs.push(await measure('floor', floor.child, floorUrl, mix, options))
    }
    const ratio = (key: 'cpuUsPerRequest' | 'p99' | 'rps') => {
      const values: number[] = []
      for (let i = 0; i < runs.length; i += 2) values.push((runs[i] as RunFigure)[key] / (runs[i + 1] as RunFigure)[key])
      return { median: median(values), min: Math.min(...values), max: Math.max(...values) }
    }
    // The same build with its metrics listener off, against the one above (metrics on), interleaved.
    const quiet = await start('server.js', { ...env, HOST: '127.0.0.1', METRICS_PORT: '0' }, /API at/)
    children.push(quiet.child)
    const quietUrl = /API at (http:\/\/[^/]+)/.exec(quiet.line)?.[1] as string
    await load(quietUrl, mix, 2, options.connections)
    const on: number[] = []
    const off: number[] = []
    for (let pair = 0; pair < options.pairs; pair++) {
      on.push((await measure('service', service.child, serviceUrl, mix, options)).cpuUsPerRequest)
      off.push((await measure('service', quiet.child, quietUrl, mix, options)).cpuUsPerRequest)
    }
    const costRatios = on.map((x, i) => x / (off[i] as number))
    const metrics: MetricsCost = { on: median(on), off: median(off), ratio: { median: median(costRatios), min: Math.min(...costRatios), max: Math.max(...costRatios) } }
    const paging = await benchPaging(serviceUrl, service.child, databaseChild, `/projects/${String(project?._id)}/registrations?sort=-createdAt`, options)
    return { database: { kind: db.kind, reason: db.reason }, mix: mix.map((m) => m.name), runs, ratios: { cpu: ratio('cpuUsPerRequest'), p99: ratio('p99'), rps: ratio('rps') }, paging, metrics }
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

export function printHttp (result: HttpResult): void {
  console.log(`\nHTTP benchmark: the query mix (${result.mix.join('; ')}) against ${result.database.kind}`)
  console.table(result.runs.map((r, i) => ({
    run: `${Math.floor(i / 2) + 1}${r.target === 'service' ? 'A' : 'B'} ${r.target}`,
    'req/s': Math.round(r.rps),
    'p50 ms': r.p50,
    'p99 ms': r.p99,
    'CPU µs/req': Math.round(r.cpuUsPerRequest),
    errors: r.errors
  })))
  const f = (x: { median: number, min: number, max: number }) => `${x.median.toFixed(2)} (${x.min.toFixed(2)}–${x.max.toFixed(2)})`
  console.log(`service/floor, median (min–max) over ${result.runs.length / 2} pairs: CPU per request ${f(result.ratios.cpu)} [target ≤ 1.25], p99 ${f(result.ratios.p99)} [target ≤ 1.5], req/s ${f(result.ratios.rps)}`)
  const m = result.metrics
  console.log(`\nMetrics on/off (same build, request ids always on): CPU per request ${Math.round(m.on)} µs vs ${Math.round(m.off)} µs, ratio ${m.ratio.median.toFixed(3)} (${m.ratio.min.toFixed(3)}–${m.ratio.max.toFixed(3)}) [target ≤ 1.05]`)
  console.log('\nDeep pages of registrations (sort=-createdAt, 20 per page), median over the rounds')
  console.table(result.paging.map((p) => ({
    page: p.page,
    'service CPU µs/req': Math.round(p.serviceCpuUsPerRequest),
    ...(p.databaseCpuUsPerRequest === undefined ? {} : { 'database CPU µs/req': Math.round(p.databaseCpuUsPerRequest) }),
    'p50 ms': p.p50
  })))
}
