/** Mean time per call of `fn` over `calls` calls, in nanoseconds. */
export function timePerCall (fn: (i: number) => unknown, calls: number): number {
  const start = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) fn(i)
  return Number(process.hrtime.bigint() - start) / calls
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** The median of some runs' figures (ratios, mostly), with their least and greatest. */
export interface Spread { median: number, min: number, max: number }

export const spread = (values: number[]): Spread => ({
  median: median(values), min: Math.min(...values), max: Math.max(...values)
})

/** A spread as the tables print it: `median (min–max)`. */
export const spreadText = (x: Spread, digits = 2): string =>
  `${x.median.toFixed(digits)} (${x.min.toFixed(digits)}–${x.max.toFixed(digits)})`
