// Micro-benchmark: the three histogram observations a request makes (plugins/metrics.ts), with
// the service's SeriesHistogram (lib/series-histogram.ts) against prom-client's Histogram, each
// in a registry of its own. Interleaved rounds, the median of each.
import { Histogram, Registry } from 'prom-client'
import { SeriesHistogram } from '../lib/series-histogram.js'
import { SECONDS } from '../plugins/metrics.js'
import type { Table } from './report.js'
import { median, timePerCall } from './timing.js'

export interface HistogramFigure { seriesNs: number, promClientNs: number, ratio: number }

/** A route of the mix, its status and a duration, as a request would observe them. */
const ROUTES = ['/projects', '/projects/:projectId/sessions', '/projects/:projectId/registrations']

export function benchHistograms ({ rounds = 15, calls = 200_000 } = {}): HistogramFigure {
  const registry = new Registry()
  const requests = new SeriesHistogram('requests', 'h', ['route', 'method', 'status_code'], SECONDS, registry)
  const commands = new SeriesHistogram('commands', 'h', ['command', 'outcome'], SECONDS, registry)
  const checkout = new SeriesHistogram('checkout', 'h', [], SECONDS, registry)
  const theirRegistry = new Registry()
  const make = (name: string, labelNames: string[]) =>
    new Histogram({ name, help: 'h', labelNames, buckets: SECONDS, registers: [theirRegistry] })
  const theirRequests = make('requests', ['route', 'method', 'status_code'])
  const theirCommands = make('commands', ['command', 'outcome'])
  const theirCheckout = make('checkout', [])
  const seconds = (i: number): number => (i % 97) / 4000
  const ours: number[] = []
  const theirs: number[] = []
  for (let round = 0; round < rounds; round++) {
    ours.push(timePerCall((i) => {
      requests.observe(requests.series(ROUTES[i % 3] as string, 'GET', '200'), seconds(i))
      commands.observe(commands.series('find', 'ok'), seconds(i))
      checkout.observe(checkout.series(), seconds(i))
    }, calls))
    theirs.push(timePerCall((i) => {
      theirRequests.observe({ route: ROUTES[i % 3] as string, method: 'GET', status_code: '200' }, seconds(i))
      theirCommands.observe({ command: 'find', outcome: 'ok' }, seconds(i))
      theirCheckout.observe(seconds(i))
    }, calls))
  }
  return { seriesNs: median(ours), promClientNs: median(theirs), ratio: median(ours) / median(theirs) }
}

export function histogramTable (figure: HistogramFigure): Table {
  return {
    title: 'A request\'s three histogram observations (median ns per request)',
    rows: [{
      'SeriesHistogram ns': Math.round(figure.seriesNs),
      'prom-client Histogram ns': Math.round(figure.promClientNs),
      'SeriesHistogram / Histogram': figure.ratio.toFixed(2)
    }]
  }
}
