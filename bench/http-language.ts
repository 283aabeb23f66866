// What the reader's language costs: a sort on names in the service's collation against the same
// sort by a service in byte order (COLLATION=simple), and a condition on one subscription
// (`$elemMatch`) against the two top-level keys, each pair in interleaved rounds. Against the
// replay database these are the service's costs; with `--database direct` (or MONGODB_URI) the
// database's part is in them too, which is where a collation's comparisons run.
import type { SectionContext } from './http-context.js'
import type { LanguageFigure, RunFigure, Server } from './http-types.js'
import { measure, warmUp } from './load.js'
import type { MixEntry } from './mix.js'
import { median, spread } from './timing.js'

export interface LanguagePair {
  load: string
  against: string
  a: { server: Server, path: string }
  b: { server: Server, path: string }
}

/** The pairs, from the mix's project: the byte-order service answers the same URL as the service. */
export function languagePairs (
  { service }: Pick<SectionContext, 'service'>, simple: Server,
  language: { sortByName: MixEntry, elemMatch: MixEntry, twoKeys: MixEntry }
): LanguagePair[] {
  return [
    {
      load: language.sortByName.name,
      against: 'the same in byte order (COLLATION=simple)',
      a: { server: service, path: language.sortByName.path },
      b: { server: simple, path: language.sortByName.path }
    },
    {
      load: language.elemMatch.name,
      against: language.twoKeys.name,
      a: { server: service, path: language.elemMatch.path },
      b: { server: service, path: language.twoKeys.path }
    }
  ]
}

export async function benchLanguage ({ options }: SectionContext, pairs: LanguagePair[]): Promise<LanguageFigure[]> {
  const figures: LanguageFigure[] = []
  for (const { load, against, a, b } of pairs) {
    await warmUp(a.server, [a.path], options.connections)
    await warmUp(b.server, [b.path], options.connections)
    const runs: Array<[RunFigure, RunFigure]> = []
    for (let round = 0; round < Math.max(3, Math.ceil(options.rounds / 2)); round++) {
      // The order turns each round, so that neither always follows the other.
      const first = await measure(
        round % 2 === 0 ? a.server : b.server, [round % 2 === 0 ? a.path : b.path],
        Math.max(2, options.duration / 4), options.connections
      )
      const second = await measure(
        round % 2 === 0 ? b.server : a.server, [round % 2 === 0 ? b.path : a.path],
        Math.max(2, options.duration / 4), options.connections
      )
      runs.push(round % 2 === 0 ? [first, second] : [second, first])
    }
    figures.push({
      load,
      against,
      cpuUs: median(runs.map(([x]) => x.cpuUsPerRequest)),
      againstCpuUs: median(runs.map(([, y]) => y.cpuUsPerRequest)),
      ratio: spread(runs.map(([x, y]) => x.cpuUsPerRequest / y.cpuUsPerRequest)),
      p99: median(runs.map(([x]) => x.p99)),
      againstP99: median(runs.map(([, y]) => y.p99))
    })
  }
  return figures
}
