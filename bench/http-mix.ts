// The query mix: the service and the two floors, each warmed until stable, then measured in
// rounds whose order turns, so that no target always follows the same one.
import type { SectionContext } from './http-context.js'
import type { HttpResult, RunFigure, Server, Target } from './http-types.js'
import { measure, warmUp } from './load.js'
import { spread, type Spread } from './timing.js'

export async function benchMix (
  { options, service, floor, rawFloor, mix }: SectionContext
): Promise<NonNullable<HttpResult['mix']>> {
  const servers = [service, floor, rawFloor]
  const mixPaths = mix.map((entry) => entry.path)
  const warm: Record<string, number[]> = {}
  for (const s of servers) warm[s.target] = await warmUp(s, mixPaths, options.connections)
  const runs: RunFigure[] = []
  for (let round = 0; round < options.rounds; round++) {
    // The order turns each round, so that no target always follows the same one.
    const order = [service, floor, rawFloor]
    for (let i = 0; i < round % 3; i++) order.push(order.shift() as Server)
    for (const s of order) runs.push(await measure(s, mixPaths, options.duration, options.connections))
  }
  const byRound = (target: Target): RunFigure[] => runs.filter((r) => r.target === target)
  const ratio = (a: Target, b: Target, key: 'cpuUsPerRequest' | 'p99' | 'rps'): Spread =>
    spread(byRound(a).map((run, i) => run[key] / (byRound(b)[i] as RunFigure)[key]))
  return {
    names: mix.map((m) => m.name),
    warmUp: warm,
    runs,
    ratios: {
      cpu: ratio('service', 'floor', 'cpuUsPerRequest'),
      p99: ratio('service', 'floor', 'p99'),
      rps: ratio('service', 'floor', 'rps'),
      rawFloorCpu: ratio('raw floor', 'floor', 'cpuUsPerRequest')
    }
  }
}
