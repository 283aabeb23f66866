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
