// How a server is loaded and measured: autocannon for the load, /proc for the server's CPU, the
// server's own collector figures (bench/gc-observer.ts), and warm-up until its JIT settles.
import { execSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import type { GcFigures } from './gc-observer.js'
import type { RunFigure, Server } from './http-types.js'

const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim()) || 100

/** User + system CPU time of a process, in microseconds, from /proc (Linux). */
export function cpuMicros (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 1e6 / CLOCK_TICKS
}

/** The pid doing the work: taskset execs node in place, so the child's own pid. */
export const pidOf = (server: Server): number => server.child.pid as number

/**
 * One measured run. A server left idle while the others ran loses some of its optimized code,
 * so each run follows one unmeasured second of the same load.
 */
export async function measure (
  server: Server, paths: string[], duration: number, connections: number, headers: Record<string, string> = {}
): Promise<RunFigure> {
  await autocannon({
    url: server.url, connections, duration: 1, requests: paths.map((path) => ({ method: 'GET', path, headers }))
  })
  return await run(server, paths, duration, connections, headers)
}

async function run (
  server: Server, paths: string[], duration: number, connections: number, headers: Record<string, string> = {}
): Promise<RunFigure> {
  await gcFigures(server)
  const before = cpuMicros(pidOf(server))
  const result = await autocannon({
    url: server.url, connections, duration, requests: paths.map((path) => ({ method: 'GET', path, headers }))
  })
  const cpu = cpuMicros(pidOf(server)) - before
  const gc = await gcFigures(server)
  // A 304 (a poll answered from its ETag) is an answer as a 200 is.
  const ok = result['2xx'] + result['3xx']
  return {
    target: server.target,
    requests: ok,
    rps: ok / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUsPerRequest: cpu / Math.max(ok, 1),
    errors: result.non2xx - result['3xx'] + result.errors,
    duration,
    ...(gc === undefined ? {} : { gc })
  }
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
 * within 3 % of each other (a fresh process's JIT takes a while to settle), or
 * 15 rounds. Returns the CPU per request of each round.
 */
export async function warmUp (
  server: Server, paths: string[], connections: number, headers: Record<string, string> = {}
): Promise<number[]> {
  const seen: number[] = []
  for (let round = 0; round < 15; round++) {
    seen.push((await run(server, paths, 2, connections, headers)).cpuUsPerRequest)
    const [a, b] = seen.slice(-2)
    if (seen.length >= 3 && a !== undefined && b !== undefined && Math.abs(a - b) / b <= 0.03) break
  }
  return seen
}

export async function body (url: string): Promise<unknown> {
  const res = await fetch(url)
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  const json = await res.json() as { next?: string }
  // The floors have no cursors: the documents, limit, skip and total must agree.
  delete json.next
  return json
}

/** The answer's body as sent (compressed or not) and its Content-Encoding. */
export async function rawBody (
  url: string, encoding: string
): Promise<{ body: Buffer, bytes: number, encoding: string | undefined }> {
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
