// Compressed answers: each page as the service sends it to a client asking for each encoding,
// CPU per request against the same page sent as it is, interleaved; and the levels' sizes.
import { ENCODINGS } from '../plugins/compression.js'
import { benchCompressionLevels } from './compression.js'
import type { SectionContext } from './http-context.js'
import type { EncodingFigure, HttpResult } from './http-types.js'
import { measure, rawBody, warmUp } from './load.js'
import { median, spread } from './timing.js'

export async function benchEncodings (
  { options, service, growth }: SectionContext
): Promise<NonNullable<HttpResult['compression']>> {
  // The pages of 20, 100 and 1,000 documents as the service sends them to a client asking for
  // each encoding, CPU per request against the same page sent as it is, interleaved.
  const pages = growth.pageSize.filter((entry) => entry.limit >= 20)
  const identities = await Promise.all(pages.map(async (entry) => ({
    name: entry.name, body: (await rawBody(service.url + entry.path, 'identity')).body
  })))
  const encodings: EncodingFigure[] = []
  for (const entry of pages) {
    const offered = ['identity', ...ENCODINGS]
    const cpu = new Map<string, number[]>(offered.map((encoding) => [encoding, []]))
    const p99 = new Map<string, number[]>(offered.map((encoding) => [encoding, []]))
    for (const encoding of offered) {
      await warmUp(service, [entry.path], options.connections, { 'accept-encoding': encoding })
    }
    for (let round = 0; round < Math.max(3, Math.ceil(options.rounds / 2)); round++) {
      for (const encoding of offered) {
        const figure = await measure(
          service, [entry.path], Math.max(2, options.duration / 4), options.connections, { 'accept-encoding': encoding }
        )
        cpu.get(encoding)?.push(figure.cpuUsPerRequest)
        p99.get(encoding)?.push(figure.p99)
      }
    }
    const identity = cpu.get('identity') as number[]
    for (const encoding of offered) {
      const { bytes, encoding: sent } = await rawBody(service.url + entry.path, encoding)
      if (sent !== (encoding === 'identity' ? undefined : encoding)) {
        throw new Error(`${entry.name}: asked for ${encoding}, got ${sent ?? 'identity'}`)
      }
      const runs = cpu.get(encoding) as number[]
      encodings.push({
        page: entry.name,
        encoding,
        bytes,
        cpuUsPerRequest: median(runs),
        cpuRatio: spread(runs.map((x, i) => x / (identity[i] as number))),
        p99: median(p99.get(encoding) as number[])
      })
    }
  }
  return { levels: benchCompressionLevels(identities), encodings }
}
