// This build against another (--baseline): the same flags, database and load, the mix, each of
// its requests alone (where a change to the mix's ratio comes from), and the 1-document page,
// each in interleaved rounds.
import type { SectionContext } from './http-context.js'
import { shortDuration, type BaselineFigure, type RunFigure, type Server } from './http-types.js'
import { measure, warmUp } from './load.js'
import type { MixEntry } from './mix.js'
import { median, spread } from './timing.js'

export async function benchBaseline (
  { options, service, mix, growth }: SectionContext, baseline: Server, baselineName: string
): Promise<BaselineFigure[]> {
  const page = growth.pageSize[0] as MixEntry
  // A request of the mix alone runs half the duration: five of them would otherwise triple the section.
  const loads = [
    { name: 'the query mix', paths: mix.map((entry) => entry.path), duration: options.duration },
    ...mix.map((entry) => ({
      name: `mix alone: ${entry.name}`, paths: [entry.path], duration: shortDuration(options)
    })),
    { name: page.name, paths: [page.path], duration: options.duration }
  ]
  const figures: BaselineFigure[] = []
  for (const load of loads) {
    await warmUp(service, load.paths, options.connections)
    await warmUp(baseline, load.paths, options.connections)
    const pairs: Array<[RunFigure, RunFigure]> = []
    for (let round = 0; round < Math.max(3, options.rounds); round++) {
      const order = round % 2 === 0 ? [service, baseline] : [baseline, service]
      const [first, second] = [
        await measure(order[0] as Server, load.paths, load.duration, options.connections),
        await measure(order[1] as Server, load.paths, load.duration, options.connections)
      ]
      pairs.push(round % 2 === 0 ? [first, second] : [second, first])
    }
    figures.push({
      load: load.name,
      baselineName,
      serviceCpuUs: median(pairs.map(([a]) => a.cpuUsPerRequest)),
      baselineCpuUs: median(pairs.map(([, b]) => b.cpuUsPerRequest)),
      cpu: spread(pairs.map(([a, b]) => a.cpuUsPerRequest / b.cpuUsPerRequest)),
      p99: spread(pairs.map(([a, b]) => a.p99 / b.p99)),
      rps: spread(pairs.map(([a, b]) => a.rps / b.rps))
    })
  }
  return figures
}
