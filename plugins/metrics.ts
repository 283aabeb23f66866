import diagnosticsChannel from 'node:diagnostics_channel'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { MongoClient } from 'mongodb'
import { listenError } from './config.js'
import { REFUSALS_CHANNEL, writeProblem, type Refusal } from './errors.js'
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { SeriesHistogram } from '../lib/series-histogram.js'
import { problem, type Problem } from '../schemas/problem.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The metrics listener's address, when METRICS_PORT is not 0. */
    metricsAddress: string | null
  }
}

export const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * The methods a `method` label names as they are; any other is `_OTHER`, as OpenTelemetry's HTTP
 * conventions say (http.request.method): Node accepts every method of `http.METHODS` and a client
 * may send any of them, so the label would otherwise multiply the series of every route.
 */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'])
export const methodLabel = (method: string): string => KNOWN_METHODS.has(method) ? method : '_OTHER'

/** A counter fed from a Map of running totals kept elsewhere (auth failures, off-schema values). */
function counterFrom (
  registry: Registry, name: string, help: string, label: string, totals: () => ReadonlyMap<string, number>
): void {
  const seen = new Map<string, number>()
  // eslint-disable-next-line no-new
  new Counter({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect () {
      for (const [key, total] of totals()) {
        const added = total - (seen.get(key) ?? 0)
        if (added > 0) this.inc({ [label]: key }, added)
        seen.set(key, total)
      }
    }
  })
}

/** A gauge read when scraped. */
function gaugeOf (registry: Registry, name: string, help: string, read: () => number): void {
  // eslint-disable-next-line no-new
  new Gauge({ name, help, registers: [registry], collect () { this.set(read()) } })
}

/** The route label of every request no route matched: raw URLs would make the series unbounded. */
const UNMATCHED = 'unmatched'

/**
 * Requests by route template, method and status; problems by code. The refusals no hook sees
 * (plugins/errors.ts publishes them) count as unmatched, their method `_OTHER` where none was read.
 */
function requestMetrics (fastify: FastifyInstance, registry: Registry): void {
  // The three histograms every request feeds are SeriesHistograms (series-histogram.ts says why).
  const requests = new SeriesHistogram('http_server_request_duration_seconds',
    'HTTP requests by route template, method and status code', ['route', 'method', 'status_code'], SECONDS, registry)
  const rejected = new Counter({
    name: 'http_server_rejected_requests_total',
    help: 'Requests answered with a problem, by its code',
    labelNames: ['code'],
    registers: [registry]
  })
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED
    requests.observe(requests.series(route, methodLabel(request.method), String(reply.statusCode)),
      reply.elapsedTime / 1000)
    if (request.problemCode !== null) rejected.inc({ code: request.problemCode })
    done()
  })
  const onRefusal = (message: unknown): void => {
    const { server, method, status, code, seconds } = message as Refusal
    if (server !== fastify.server) return
    requests.observe(requests.series(UNMATCHED, method === null ? '_OTHER' : methodLabel(method), String(status)),
      seconds)
    rejected.inc({ code })
  }
  diagnosticsChannel.subscribe(REFUSALS_CHANNEL, onRefusal)
  fastify.addHook('onClose', (_instance, done) => {
    diagnosticsChannel.unsubscribe(REFUSALS_CHANNEL, onRefusal)
    done()
  })
}

/** The driver's commands and pool, and the watchdog's replacements. */
function databaseMetrics (fastify: FastifyInstance, registry: Registry): void {
  const commands = new SeriesHistogram('mongodb_command_duration_seconds',
    'MongoDB commands the service ran, by name and outcome: from the driver call to the answer, pool checkout included',
    ['command', 'outcome'], SECONDS, registry)
  const checkout = new SeriesHistogram('mongodb_pool_checkout_duration_seconds',
    'Time to check a connection out of the pool', [], SECONDS, registry)
  // The pool's gauges are counted as plain numbers and read when scraped.
  let open = 0
  let waiting = 0
  gaugeOf(registry, 'mongodb_pool_connections', 'Open connections of the pool', () => open)
  gaugeOf(registry, 'mongodb_pool_checkouts_waiting', 'Requests waiting for a connection', () => waiting)
  fastify.database.onCommand((command, outcome, seconds) => {
    commands.observe(commands.series(command, outcome), seconds)
  })
  fastify.database.observe((client: MongoClient) => {
    client.on('connectionCheckOutStarted', () => { waiting++ })
    client.on('connectionCheckedOut', (event) => {
      waiting--
      checkout.observe(checkout.series(), event.durationMS / 1000)
    })
    client.on('connectionCheckOutFailed', () => { waiting-- })
    client.on('connectionCreated', () => { open++ })
    client.on('connectionClosed', () => { open-- })
  })
  gaugeOf(registry, 'mongodb_client_replacements', 'MongoDB clients replaced by the watchdog since start',
    () => fastify.database.replacement.count)
}

/** The change feeds: events, waiting requests, streams and delivery lag. */
function feedMetrics (fastify: FastifyInstance, registry: Registry): void {
  const { stats } = fastify.changes
  counterFrom(registry, 'changes_events_sent_total', 'Change-feed events sent, by collection', 'collection',
    () => stats.eventsSent)
  counterFrom(registry, 'changes_events_skipped_total',
    'Change events of types the feed does not know, passed over, by collection', 'collection',
    () => stats.eventsSkipped)
  counterFrom(registry, 'changes_unreadable_total',
    'Changes that could never be read (the feeds behind them answered 410), by collection', 'collection',
    () => stats.unreadable)
  gaugeOf(registry, 'changes_requests_waiting', 'Change-feed requests waiting for a change (wait above 0)',
    () => stats.waiting)
  gaugeOf(registry, 'changes_requests_idle',
    'Change-feed requests and streams asleep between reads (until a change, their deadline or a checkpoint)',
    () => stats.idle)
  gaugeOf(registry, 'changes_streams_open', 'Change-feed streams open (Accept: application/x-ndjson)',
    () => stats.streams)
  const lag = new SeriesHistogram('changes_delivery_lag_seconds',
    'From a change\'s commit to its delivery in a feed answer', [], [...SECONDS, 30, 60], registry)
  const lagSeries = lag.series()
  const stopLag = fastify.changes.onLag((seconds) => { lag.observe(lagSeries, seconds) })
  fastify.addHook('onClose', (_instance, done) => { stopLag(); done() })
}

/** The documents kept, refused tokens, and stored values left out of answers. */
function contentMetrics (fastify: FastifyInstance, registry: Registry): void {
  const kept = fastify.keptDocuments
  if (kept !== undefined) {
    counterFrom(registry, 'documents_kept_lookups_total',
      'Documents looked for among those kept (DOCUMENTS_KEPT_MB): copied, ' +
      'or written because none was kept with the same bytes',
      'outcome', () => new Map([['copied', kept.reused], ['written', kept.written]]))
    gaugeOf(registry, 'documents_kept_bytes', 'Memory held by the documents kept, their BSON and their JSON',
      () => kept.size)
  }
  counterFrom(registry, 'auth_failures_total', 'Refused bearer tokens by reason', 'reason', () => fastify.authFailures)
  counterFrom(registry, 'offschema_values_total',
    'Stored values left out of responses for their type, by collection.field', 'field', () => fastify.offSchema.counts)
}

function answerProblem (response: http.ServerResponse, body: Problem, allow?: string): void {
  writeProblem(response, body.status, JSON.stringify(body), allow === undefined ? {} : { allow })
}

/** The listener of GET /metrics, closed with the app. */
async function serveMetrics (fastify: FastifyInstance, registry: Registry, port: number, host: string): Promise<void> {
  const server = http.createServer((request, response) => {
    // Its refusals are problem+json like the public port's; a query string is ignored, as Prometheus may send one.
    const path = (request.url ?? '').split('?')[0]
    if (path !== '/metrics') {
      answerProblem(response, problem(404, 'NOT_FOUND', 'This listener serves GET /metrics only.', [], 'path'))
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      answerProblem(response, problem(405, 'METHOD_NOT_ALLOWED',
        `${String(request.method)} is not allowed here: /metrics answers GET and HEAD`, [], 'method'), 'GET, HEAD')
      return
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: Error) => {
        fastify.log.error({ err: error }, 'metrics collection failed')
        answerProblem(response, problem(500, 'INTERNAL_ERROR', 'The metrics could not be collected; see the log.'))
      }
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(listenError('METRICS_PORT', port, host, error, ', or 0 to turn the metrics listener off')))
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  fastify.metricsAddress = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`
  fastify.log.info(`metrics at ${fastify.metricsAddress}/metrics`)
  fastify.addHook('onClose', async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
}

/**
 * docs/operations.md: Prometheus text format on GET /metrics of a listener of its own
 * (METRICS_PORT; 0 turns it off), never on the public port. Route labels are templates.
 */
async function metricsPlugin (fastify: FastifyInstance) {
  fastify.decorate('metricsAddress', null)
  const { METRICS_PORT, HOST } = fastify.config
  if (METRICS_PORT === 0) return
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  requestMetrics(fastify, registry)
  databaseMetrics(fastify, registry)
  feedMetrics(fastify, registry)
  contentMetrics(fastify, registry)
  await serveMetrics(fastify, registry, METRICS_PORT, HOST)
}

export default fp(metricsPlugin, {
  name: 'metrics',
  dependencies: ['config', 'errors', 'mongodb', 'access-control', 'off-schema', 'changes', 'kept-documents']
})
