import { FastifyOtelInstrumentation } from '@fastify/otel'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { SpanKind, SpanStatusCode, type SpanStatus } from '@opentelemetry/api'
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type Span,
  type SpanExporter,
  type SpanProcessor
} from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { PACKAGE } from '../lib/package-info.js'

export const SHUTDOWN_FLUSH_MS = 2000

export interface Tracing {
  /** Exports the spans still buffered, then stops; within SHUTDOWN_FLUSH_MS. */
  shutdown: () => Promise<void>
}

/**
 * `@fastify/otel` marks a request span as failed for every error thrown through Fastify, 400s
 * included. The HTTP conventions say a server span's status stays unset for a 4xx: the client
 * erred, not the service, and error-rate views in tracing backends count ERROR spans.
 * https://opentelemetry.io/docs/specs/semconv/http/http-spans/#status
 */
const clientErrorsAreNotSpanErrors: SpanProcessor = {
  onStart () {},
  onEnding (span: Span) {
    const status = span.attributes['http.response.status_code']
    if (span.kind === SpanKind.SERVER && typeof status === 'number' && status < 500 &&
      span.status.code === SpanStatusCode.ERROR) {
      // The SDK's setStatus never goes back to UNSET; the span is still open here (onEnding).
      (span as { status: SpanStatus }).status = { code: SpanStatusCode.UNSET }
    }
  },
  onEnd () {},
  forceFlush: async () => {},
  shutdown: async () => {}
}

/**
 * Commands whose first field's value is a collection name (the instrumentation also hands over
 * documents, whose first value stays redacted).
 */
const COLLECTION_COMMANDS = new Set([
  'find', 'aggregate', 'count', 'distinct', 'createIndexes', 'listIndexes', 'killCursors'
])

/**
 * The statement of a command span: every value redacted to `?`, as the instrumentation's own
 * serializer does, except the collection a command names (`{"find":"sessions",…}`), which
 * commandCollections reads back. Filters can carry personal data; collection names do not.
 */
export function redactedStatement (command: Record<string, unknown>): string {
  const [name] = Object.keys(command)
  const named = name !== undefined && COLLECTION_COMMANDS.has(name)
  return JSON.stringify(command, function (this: unknown, key, value: unknown) {
    if (named && this === command && key === name && typeof value === 'string') return value
    return typeof value === 'object' && value !== null ? value : '?'
  })
}

const COMMAND_COLLECTION = /^\{"[A-Za-z]+":("(?:[^"\\]|\\.)*")/

/**
 * Lists run their `find` through Db#command (list-endpoint/find-page.ts), which the driver
 * sends on the `<db>.$cmd` namespace: the instrumentation then names the span `find $cmd`.
 * The collection is the command's own value, kept in the statement by redactedStatement.
 */
const commandCollections: SpanProcessor = {
  onStart (span: Span) {
    if (span.kind !== SpanKind.CLIENT || span.attributes['db.collection.name'] !== '$cmd') return
    const statement = span.attributes['db.query.text']
    const match = typeof statement === 'string' ? COMMAND_COLLECTION.exec(statement) : null
    if (match === null) return
    const collection = JSON.parse(match[1] as string) as string
    if (collection === '?') return
    span.setAttribute('db.collection.name', collection)
    span.updateName(`${String(span.attributes['db.operation.name'])} ${collection}`)
  },
  onEnd () {},
  forceFlush: async () => {},
  shutdown: async () => {}
}

/**
 * OpenTelemetry tracing (docs/operations.md): a server span per request from `@fastify/otel`
 * (route template, method, status; `traceparent` continued) and a client span per MongoDB
 * command from the driver's instrumentation. It patches the driver as it loads, so this must
 * run before anything imports `mongodb`: `server.ts` imports the service only afterwards.
 *
 * The OTLP exporter reads `OTEL_EXPORTER_OTLP_ENDPOINT` (and the other standard `OTEL_*`
 * settings); the sampler follows `OTEL_TRACES_SAMPLER`, parent-based always-on by default.
 * Tests pass their own exporter, which is then flushed on every span.
 */
export function startTracing (exporter?: SpanExporter): Tracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME ?? 'listing-api',
      [ATTR_SERVICE_VERSION]: PACKAGE.version
    }),
    spanProcessors: [
      commandCollections,
      clientErrorsAreNotSpanErrors,
      exporter === undefined ? new BatchSpanProcessor(new OTLPTraceExporter()) : new SimpleSpanProcessor(exporter)
    ]
  })
  // Registers the AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register()
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // Registers itself on every Fastify instance as it is created (Fastify's diagnostics channel).
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        // Probes and docs would only be noise in traces.
        ignorePaths: ({ url }) => url === '/health' || url === '/ready' || url.startsWith('/docs')
      }),
      // Statement values redacted: filters can carry personal data (names, e-mail addresses).
      new MongoDBInstrumentation({ enhancedDatabaseReporting: false, dbStatementSerializer: redactedStatement })
    ]
  })
  return {
    // An unreachable collector would hold the exit for the exporter's 10 s timeout and retries:
    // spans still buffered after SHUTDOWN_FLUSH_MS are given up.
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        provider.shutdown(),
        new Promise((resolve) => { timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS) })
      ])
      clearTimeout(timer)
    }
  }
}
