// One request shape at a time (pages of growing size, `$in` lists of growing length): the
// service against the floor, each warmed on the shape, in interleaved rounds.
import type { SectionContext } from './http-context.js'
import type { GrowthFigure, RunFigure } from './http-types.js'
import { measure, warmUp } from './load.js'
import { median, spread } from './timing.js'

export async function benchGrowth ({ options, service, floor, growth }: SectionContext): Promise<GrowthFigure[]> {
  const figures: GrowthFigure[] = []
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
    figures.push({
      load: entry.name,
      serviceCpuUs: median(pairs.map(([a]) => a.cpuUsPerRequest)),
      floorCpuUs: median(pairs.map(([, b]) => b.cpuUsPerRequest)),
      ratio: spread(pairs.map(([a, b]) => a.cpuUsPerRequest / b.cpuUsPerRequest)),
      serviceP99: median(pairs.map(([a]) => a.p99)),
      floorP99: median(pairs.map(([, b]) => b.p99))
    })
  }
  return figures
}
