// The tables of the change feeds' benchmark (feeds.ts), for docs/performance.md.
import { CATCH_UP, LAG_WRITES, LIST_WALKS, type FeedRun, type FeedsResult } from './feeds.js'
import type { Table } from './report.js'
import { median, spread, spreadText } from './timing.js'

export function feedsTables (result: FeedsResult): Table[] {
  const alone = result.runs.filter((run) => run.waiting === 0)
  const beside = result.runs.filter((run) => run.waiting > 0)
  const ratio = (key: 'cpuUsPerRequest' | 'p99' | 'rps'): string =>
    spreadText(spread(beside.map((run, i) => run[key] / (alone[i] as FeedRun)[key])))
  const row = (label: string, runs: FeedRun[]) => ({
    '': label,
    'CPU µs/request': median(runs.map((run) => run.cpuUsPerRequest)).toFixed(0),
    'requests/s': median(runs.map((run) => run.rps)).toFixed(0),
    'p99 ms': median(runs.map((run) => run.p99)).toFixed(1),
    'pool connections': runs.map((run) => run.poolConnections).join(', ')
  })
  const catchUp = result.catchUp.map((round) => round.feedEventsPerCpuSecond / round.listDocumentsPerCpuSecond)
  return [
    {
      title: `Change feeds: the list mix alone and beside ${result.waiters} requests waiting on feeds ` +
        `(one service, against the database directly; ${alone.length} interleaved runs each)`,
      rows: [row('the mix alone', alone), row(`the mix, ${result.waiters} waiting`, beside)],
      notes: [
        `Beside the waiting requests, per request: CPU ×${ratio('cpuUsPerRequest')}, p99 ×${ratio('p99')}, ` +
          `requests/s ×${ratio('rps')} (median, min–max of the runs). The pool's connections are those of the ` +
          'whole service, read from its metrics after each run.'
      ]
    },
    {
      title: `Change feeds: a catch-up of ${CATCH_UP.toLocaleString('en')} changes against walks of a list of the ` +
        `same documents (limit=1000; inserts, then two rounds of updates; the list walked ${LIST_WALKS} times a round)`,
      rows: result.catchUp.map((round, i) => ({
        round: i === 0 ? 'inserts' : `updates ${i}`,
        'feed events / CPU-second': round.feedEventsPerCpuSecond.toFixed(0),
        'list documents / CPU-second': round.listDocumentsPerCpuSecond.toFixed(0),
        ratio: (round.feedEventsPerCpuSecond / round.listDocumentsPerCpuSecond).toFixed(2)
      })),
      notes: [
        `Median ratio ${median(catchUp).toFixed(2)}: each feed answer reads the changed documents again by _id, ` +
          'where a list page reads a range.'
      ]
    },
    {
      title: 'Change feeds: delivery lag, from a write\'s acknowledgement to the answers of ' +
        `${result.lag.waiters} requests waiting on its project (${LAG_WRITES} writes, 200 ms apart)`,
      rows: [{
        deliveries: result.lag.deliveries,
        'p50 ms': result.lag.p50.toFixed(1),
        'p99 ms': result.lag.p99.toFixed(1),
        'max ms': result.lag.max.toFixed(1)
      }]
    }
  ]
}
