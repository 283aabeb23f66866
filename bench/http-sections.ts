// The sections of the HTTP benchmark that start services of their own: the optional stages, the
// feeds, conditional requests and another build (bench/http.ts runs them after the others).
import { MongoClient } from 'mongodb'
import { benchFeeds, type FeedsResult } from './feeds.js'
import { benchBaseline } from './http-baseline.js'
import { benchConditional } from './http-conditional.js'
import type { SectionContext } from './http-context.js'
import {
  shortDuration, type BaselineFigure, type ConditionalResult, type HttpOptions, type Server, type Target
} from './http-types.js'
import { body, cpuMicros, measure, pidOf, warmUp } from './load.js'
import { benchStages, type StageFigure } from './stages.js'

/** Starts a service (or floor) process and resolves once it listens. */
export type StartServer = (
  target: Target, script: string, extra: NodeJS.ProcessEnv, match: RegExp, url: RegExp, nodeArgs?: string[]
) => Promise<Server>

/**
 * What these sections are given besides the measured servers: the database itself and how to
 * start a service.
 */
export interface RunContext extends SectionContext {
  /** The database itself (not its replay, which cannot answer change streams). */
  database: { uri: string, name: string }
  /** The image's node flags; and those with BENCH_NODE_ARGS, for the service measured. */
  deployed: string[]
  serviceArgs: string[]
  start: StartServer
}

const API_AT = /API at/
const API_URL = /API at (http:\/\/[^/]+)/

/** A free loopback port for a metrics listener. */
export async function freePort (): Promise<number> {
  const { createServer } = await import('node:net')
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The price of each optional stage on a 1-document page (bench/stages.ts). */
export async function stagesSection (
  { options, service, mix, growth, deployed, start }: RunContext
): Promise<StageFigure[]> {
  const onePage = growth.pageSize[0]?.path as string
  const firstId = ((await body(service.url + onePage)) as { data: Array<{ _id: string }> }).data[0]?._id as string
  return await benchStages<Server>({
    service: async (name, extra, nodeArgs = []) => await start(
      `stage: ${name}`, 'server.js', { METRICS_PORT: '0', ...extra }, API_AT, API_URL, [...deployed, ...nodeArgs]
    ),
    freePort,
    measure: async (s, paths, headers, long) => await measure(
      s, paths, long === true ? options.duration : shortDuration(options), options.connections, headers
    ),
    warmUp: async (s, paths, headers) => await warmUp(s, paths, options.connections, headers),
    rounds: Math.max(3, options.rounds)
  }, {
    withCursor: onePage,
    plain: `${onePage.split('?')[0] as string}?filter=` +
      `${encodeURIComponent(JSON.stringify({ _id: firstId }))}&limit=1`,
    large: growth.pageSize.find((entry) => entry.limit === 1000)?.path as string,
    mix: mix.map((entry) => entry.path)
  })
}

/** Change feeds, on a service of their own against the database itself. */
export async function feedsSection (
  { options, mix, database, deployed, start }: RunContext
): Promise<FeedsResult> {
  const metricsPort = await freePort()
  const feedService = await start('service', 'server.js', {
    MONGODB_URI: database.uri, METRICS_PORT: String(metricsPort), CHANGES_MAX_WAITING: '2000'
  }, API_AT, API_URL, deployed)
  const mixPaths = mix.map((entry) => entry.path)
  await warmUp(feedService, mixPaths, options.connections)
  return await benchFeeds({
    url: feedService.url,
    pid: pidOf(feedService),
    metricsUrl: `http://127.0.0.1:${metricsPort}`,
    databaseUri: database.uri,
    databaseName: database.name,
    mixPaths,
    rounds: Math.max(3, options.rounds),
    measure: async (paths) => await measure(feedService, paths, options.duration, options.connections),
    cpuMicros
  })
}

/**
 * Conditional requests, on a service of their own against the database itself. The commands
 * they cost are the database's own counts (serverStatus opcounters), less this probe's.
 */
export async function conditionalSection (
  { options, growth, database, deployed, start }: RunContext
): Promise<ConditionalResult> {
  const probe = await new MongoClient(database.uri, { serverSelectionTimeoutMS: 5000, heartbeatFrequencyMS: 600_000 })
    .connect()
  try {
    const commandsSent = async (): Promise<number> => {
      const { opcounters } = await probe.db('admin').command({ serverStatus: 1 }) as {
        opcounters: Record<string, number>
      }
      return Object.values(opcounters).reduce((sum, n) => sum + Number(n), 0)
    }
    const pollService = await start(
      'service', 'server.js', { MONGODB_URI: database.uri, METRICS_PORT: '0' }, API_AT, API_URL, deployed
    )
    const path = growth.pageSize.find((entry) => entry.limit === 100)?.path as string
    await warmUp(pollService, [path], options.connections)
    return await benchConditional({
      service: pollService,
      commandsSent,
      path,
      rounds: Math.max(3, options.rounds),
      measure: async (headers) =>
        await measure(pollService, [path], shortDuration(options), options.connections, headers)
    })
  } finally {
    await probe.close()
  }
}

/** Another build of the service (its dist/), with the same flags, database and load. */
export async function baselineSection (
  context: RunContext, baseline: NonNullable<HttpOptions['baseline']>
): Promise<BaselineFigure[]> {
  const { deployed, serviceArgs, start } = context
  console.log(`baseline: node ${deployed.join(' ')} ${baseline.dist}/server.js (${baseline.name})`)
  const other = await start(
    'baseline', `${baseline.dist}/server.js`, { METRICS_PORT: String(await freePort()) }, API_AT, API_URL, deployed
  )
  // This build started afresh too: after the other sections, the first one's JIT and kept
  // documents are shaped by loads the baseline never served.
  const fresh = await start(
    'service', 'server.js', { METRICS_PORT: String(await freePort()) }, API_AT, API_URL, serviceArgs
  )
  return await benchBaseline({ ...context, service: fresh }, other, baseline.name)
}
