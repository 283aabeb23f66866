// Polls of an unchanged list (docs/conditional-requests.md): the same page asked with the ETag of
// its last answer (304, decided from the collection's change stream) and without it (200, the
// query and the whole page), in interleaved rounds, against the database itself (a replay cannot
// answer change streams): requests per CPU-second of the service, and the database commands each
// request costs, as the database counts them (serverStatus opcounters: the stand-in keeps them too).
import type { ConditionalFigure, ConditionalResult, RunFigure, Server } from './http-types.js'
import { body } from './load.js'
import { median, spread } from './timing.js'

export interface ConditionalContext {
  service: Server
  /** The commands the database has received so far (serverStatus), the asking one left out. */
  commandsSent: () => Promise<number>
  path: string
  rounds: number
  measure: (headers: Record<string, string>) => Promise<RunFigure>
}

export async function benchConditional (context: ConditionalContext): Promise<ConditionalResult> {
  const { service, commandsSent, path, rounds } = context
  // The first If-None-Match opens the collection's stream; then the answers carry its point.
  let etag = ''
  for (let i = 0; i < 100 && etag.split('.').length < 4; i++) {
    const res = await fetch(service.url + path, { headers: { 'if-none-match': 'W/"v1.none"' } })
    etag = res.headers.get('etag') ?? ''
    await res.arrayBuffer()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  if (etag.split('.').length < 4) throw new Error(`the answers of ${path} carry no point of the change stream`)
  await body(service.url + path)
  const runs: Array<{ load: string, run: RunFigure, commands: number }> = []
  for (let round = 0; round < rounds; round++) {
    for (const [load, headers] of (round % 2 === 0
      ? [['304', { 'if-none-match': etag }], ['200', {}]]
      : [['200', {}], ['304', { 'if-none-match': etag }]]) as Array<[string, Record<string, string>]>) {
      const before = await commandsSent()
      const run = await context.measure(headers)
      // The second serverStatus counts itself: one less.
      runs.push({ load, run, commands: (await commandsSent() - before - 1) / Math.max(1, run.requests) })
    }
  }
  const of = (load: string) => runs.filter((r) => r.load === load)
  const figure = (load: string, name: string): ConditionalFigure => ({
    load: name,
    requestsPerCpuSecond: median(of(load).map((r) => 1e6 / r.run.cpuUsPerRequest)),
    commandsPerRequest: median(of(load).map((r) => r.commands)),
    p99: median(of(load).map((r) => r.run.p99))
  })
  const ratio = spread(of('304').map((r, i) =>
    (1e6 / r.run.cpuUsPerRequest) / (1e6 / (of('200')[i] as { run: RunFigure }).run.cpuUsPerRequest)))
  return { path, figures: [figure('304', 'with If-None-Match: 304'), figure('200', 'without: 200')], ratio }
}
