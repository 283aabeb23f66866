// The price of each optional stage of a request, on a 1-document page: what a small page costs
// is what the service adds around its one database command. A baseline service with every
// optional stage off runs beside the same build with one stage on (or the same request with one
// difference), in interleaved rounds, each warmed on its own load first. The driver shim is
// measured on the query mix instead, in rounds of the full duration: what it saves is garbage
// kept alive under sustained load (docs/performance.md, "Why it is fast" ("A steady tail")), which a 1-document
// page in short rounds barely makes. So is V8's allocation-site pretenuring, which the image's
// command line turns off. The image's old-generation limit (three times what survived) is set
// against a factor of two on 1000-document pages, where it pays, and on the mix.
import { generateKeyPairSync } from 'node:crypto'
import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createSigner } from 'fast-jwt'
import type { Table } from './report.js'
import { median, spread, spreadText, type Spread } from './timing.js'

export interface StageFigure {
  stage: string
  baseUs: number
  withUs: number
  costUs: number
  ratio: Spread
  p99: Spread
}

interface Measured { cpuUsPerRequest: number, p99: number }

export interface StageHarness<S> {
  /**
   * Starts the service with these variables over the bench's own (metrics off, no auth, no rate
   * limit), and node flags after the image's.
   */
  service: (name: string, env: Record<string, string>, nodeArgs?: string[]) => Promise<S>
  /** One round; `long`: of the full duration rather than a short one. */
  measure: (server: S, paths: string[], headers?: Record<string, string>, long?: boolean) => Promise<Measured>
  warmUp: (server: S, paths: string[], headers?: Record<string, string>) => Promise<unknown>
  /** A port nothing listens on (the metrics listener's). */
  freePort: () => Promise<number>
  rounds: number
}

const ISSUER = 'https://idp.bench'
const AUDIENCE = 'listing-api'

/** An OTLP endpoint that accepts every export and keeps nothing. */
async function otlpSink (): Promise<{ url: string, close: () => Promise<void> }> {
  const server: HttpServer = createServer((req, res) => {
    req.resume()
    req.on('end', () => { res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => { await new Promise((resolve) => server.close(resolve)) }
  }
}

/**
 * `withCursor` is a 1-document page with a next page (its cursor is signed); `plain` the same
 * list filtered to that one document (no next page, no cursor): the baseline's request. `large`
 * is a page of 1000 registrations, `mix` the query mix's paths.
 */
export async function benchStages<S> (
  harness: StageHarness<S>, paths: { withCursor: string, plain: string, large: string, mix: string[] }
): Promise<StageFigure[]> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const token = createSigner({
    key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), algorithm: 'ES256', expiresIn: 24 * 3600_000
  })({ iss: ISSUER, aud: AUDIENCE, sub: 'bench', projects: '*' })
  const sink = await otlpSink()
  try {
    const base = await harness.service('baseline', {})
    // A later flag overrides the image's: the old-generation limit twice what survived.
    const twice = await harness.service('old-generation limit ×2', {}, ['--heap-growing-percent=100'])
    // `page`: both services answer this page instead of the 1-document one.
    const variants: Array<{
      stage: string, server: S, path?: string, page?: string, headers?: Record<string, string>, mix?: true
    }> = [
      {
        stage: 'metrics (METRICS_PORT)',
        server: await harness.service('metrics', { METRICS_PORT: String(await harness.freePort()) })
      },
      {
        stage: 'rate limit (RATE_LIMIT_PER_MINUTE)',
        server: await harness.service('rate limit', { RATE_LIMIT_PER_MINUTE: '1000000' })
      },
      {
        stage: 'authentication (AUTH_MODE=jwt, key cached)',
        server: await harness.service('auth', {
          AUTH_MODE: 'jwt',
          JWT_PUBLIC_KEY: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
          JWT_ISSUER: ISSUER,
          JWT_AUDIENCE: AUDIENCE,
          JWT_ALGORITHMS: 'ES256'
        }),
        headers: { authorization: `Bearer ${token}` }
      },
      {
        stage: 'tracing (OTEL_EXPORTER_OTLP_ENDPOINT)',
        server: await harness.service('tracing', { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url })
      },
      {
        stage: 'project not remembered (PROJECT_CACHE_TTL_MS=0)',
        server: await harness.service('no project cache', { PROJECT_CACHE_TTL_MS: '0' })
      },
      {
        stage: 'X-Request-Id given by the caller',
        server: base,
        headers: { 'x-request-id': 'bench-0123456789abcdef' }
      },
      { stage: 'cursor signed (a next page exists)', server: base, path: paths.withCursor },
      // The shim (database/driver-shims.ts): what turning it off costs is what it saves.
      {
        stage: 'sessions shim off (SHIMS=none), on the query mix',
        server: await harness.service('no sessions shim', { SHIMS: 'none' }),
        mix: true
      },
      // The image's V8 flags: with another value instead, what each saves.
      {
        stage: 'allocation-site pretenuring on (V8\'s default), on the query mix',
        server: await harness.service('pretenuring', {}, ['--allocation-site-pretenuring']),
        mix: true
      },
      {
        stage: 'old-generation limit twice what survived (--heap-growing-percent=100), 1000 registrations a page',
        server: twice,
        page: paths.large
      },
      {
        stage: 'old-generation limit twice what survived (--heap-growing-percent=100), on the query mix',
        server: twice,
        mix: true
      }
    ]
    await harness.warmUp(base, [paths.plain])
    const figures: StageFigure[] = []
    for (const variant of variants) {
      const basePaths = variant.mix === true ? paths.mix : [variant.page ?? paths.plain]
      const variantPaths = variant.mix === true ? paths.mix : [variant.path ?? variant.page ?? paths.plain]
      if (variant.mix === true || variant.page !== undefined) await harness.warmUp(base, basePaths)
      await harness.warmUp(variant.server, variantPaths, variant.headers)
      const pairs: Array<[Measured, Measured]> = []
      for (let round = 0; round < harness.rounds; round++) {
        const a = await harness.measure(base, basePaths, undefined, variant.mix)
        const b = await harness.measure(variant.server, variantPaths, variant.headers, variant.mix)
        pairs.push([a, b])
      }
      figures.push({
        stage: variant.stage,
        baseUs: median(pairs.map(([a]) => a.cpuUsPerRequest)),
        withUs: median(pairs.map(([, b]) => b.cpuUsPerRequest)),
        costUs: median(pairs.map(([a, b]) => b.cpuUsPerRequest - a.cpuUsPerRequest)),
        ratio: spread(pairs.map(([a, b]) => b.cpuUsPerRequest / a.cpuUsPerRequest)),
        p99: spread(pairs.map(([a, b]) => b.p99 / a.p99))
      })
    }
    return figures
  } finally {
    await sink.close()
  }
}

export function stagesTable (figures: StageFigure[]): Table {
  return {
    title: 'The price of each optional stage: CPU µs per request of a 1-document page (the rows "on the query mix": ' +
      'of the mix; "1000 registrations a page": of that page), the baseline (every optional stage off, every shim ' +
      'on, the image\'s node flags) against the same build with one stage on, the shim off or one V8 flag changed, ' +
      'interleaved; ratios median (min–max)',
    rows: figures.map((f) => ({
      stage: f.stage,
      'baseline µs': Math.round(f.baseUs),
      'with it µs': Math.round(f.withUs),
      'cost µs': Math.round(f.costUs),
      'with ÷ baseline': spreadText(f.ratio),
      'p99 with ÷ baseline': spreadText(f.p99)
    }))
  }
}
