// Loaded with --import into each server the HTTP benchmark measures: it adds up the garbage
// collector's pauses (node:perf_hooks 'gc' entries) by kind, and on the stdin line `gc` prints
// them as one JSON line — {"gc":{…}} — and starts again from zero. So each measured run says how
// much of its time, and which of its pauses, the collector took, beside its p99.
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks'
import { createInterface } from 'node:readline'

export interface GcFigures {
  /** Scavenges of the young generation. */
  minor: { count: number, ms: number }
  /** Full collections (mark-compact), their final pause only. */
  major: { count: number, ms: number }
  /** Steps of incremental marking, on the main thread between requests. */
  incremental: { count: number, ms: number }
  /** The longest single pause. */
  longestMs: number
}

const zero = (): GcFigures => ({
  minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 }, incremental: { count: 0, ms: 0 }, longestMs: 0
})
let figures = zero()

const KINDS = new Map<number, 'minor' | 'major' | 'incremental'>([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental']
])

new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>) {
    const kind = KINDS.get(entry.detail?.kind ?? 0)
    if (kind === undefined) continue
    figures[kind].count++
    figures[kind].ms += entry.duration
    figures.longestMs = Math.max(figures.longestMs, entry.duration)
  }
}).observe({ entryTypes: ['gc'] })

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'gc') return
  console.log(JSON.stringify({ gc: figures }))
  figures = zero()
})
// Waiting for a line must not keep a server alive once it has closed.
process.stdin.unref()
