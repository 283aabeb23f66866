// A Prometheus histogram for the observations every request makes (plugins/metrics.ts).
//
// prom-client's Histogram#observe does on every call what a request's labels never need again:
// it checks the label names, builds the series' key as a string from the labels object, and
// finds the bucket by writing the bound as a property name. A request observes three
// histograms; the metrics stage of `npm run bench` shows their price. Here a series is found once per
// label values through nested Maps and kept; an observation is a loop over the bounds and three
// additions. The registry of prom-client still writes the exposition: `get()` answers what its
// Histogram#get answers (test/lib/series-histogram.test.ts holds the two texts equal).
import type { Metric, Registry } from 'prom-client'

/** One series: its label values, and counts per bucket (the last is +Inf). */
export interface Series {
  readonly labels: Readonly<Record<string, string>>
  readonly counts: Float64Array
  sum: number
  count: number
}

type Level = Map<string, Level | Series>

export class SeriesHistogram {
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  private readonly bounds: Float64Array
  private levels: Level = new Map()
  private all: Series[] = []

  constructor (
    readonly name: string, readonly help: string, private readonly labelNames: readonly string[],
    buckets: readonly number[], registry: Registry
  ) {
    const sorted = [...buckets].sort((a, b) => a - b)
    if (sorted.some((bound, i) => !Number.isFinite(bound) || bound === sorted[i - 1])) {
      throw new Error(`${name}: buckets must be finite and distinct`)
    }
    this.bounds = Float64Array.from(sorted)
    // The registry asks a metric for name, type and get(); this is that interface.
    registry.registerMetric(this as unknown as Metric)
  }

  /** The series of these label values, in the order of the label names; made on first use. */
  series (...values: string[]): Series {
    if (values.length !== this.labelNames.length) {
      throw new Error(`${this.name}: ${this.labelNames.length} label values expected`)
    }
    let level = this.levels
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i] as string) as Level | undefined
      if (next === undefined) {
        next = new Map()
        level.set(values[i] as string, next)
      }
      level = next
    }
    const last = values.length === 0 ? '' : values[values.length - 1] as string
    let series = level.get(last) as Series | undefined
    if (series === undefined) {
      series = {
        labels: Object.fromEntries(this.labelNames.map((name, i) => [name, values[i] as string])),
        counts: new Float64Array(this.bounds.length + 1),
        sum: 0,
        count: 0
      }
      level.set(last, series)
      this.all.push(series)
    }
    return series
  }

  /** Counts `value` in `series` (from series()); a value that is not a finite number is refused. */
  observe (series: Series, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: not a finite number: ${value}`)
    const bounds = this.bounds
    let at = 0
    while (at < bounds.length && value > (bounds[at] as number)) at++
    series.counts[at] = (series.counts[at] as number) + 1
    series.sum += value
    series.count++
  }

  /** What prom-client's Histogram#get answers: cumulative buckets, +Inf, sum and count per series. */
  async get () {
    const values: Array<{ labels: Record<string, string | number>, value: number, metricName: string }> = []
    for (const series of this.all) {
      let total = 0
      for (let i = 0; i < this.bounds.length; i++) {
        total += series.counts[i] as number
        values.push({
          labels: { le: this.bounds[i] as number, ...series.labels }, value: total, metricName: `${this.name}_bucket`
        })
      }
      values.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: `${this.name}_bucket` })
      values.push({ labels: { ...series.labels }, value: series.sum, metricName: `${this.name}_sum` })
      values.push({ labels: { ...series.labels }, value: series.count, metricName: `${this.name}_count` })
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator }
  }

  /** Forgets every series (Registry#resetMetrics). */
  reset (): void {
    this.levels = new Map()
    this.all = []
  }
}
