import { FastifyOtelInstrumentation } from '@fastify/otel'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { SpanKind, SpanStatusCode, type SpanStatus } from '@opentelemetry/api'
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { PACKAGE } from '../package-info.js'

export const SHUTDOWN_FLUSH_MS = 2000

export interface Tracing {
  /** Exports the spans still buffered, then stops; within SHUTDOWN_FLUSH_MS. */
  shutdown: () => Promise<void>
}

/**
 * OpenTelemetry tracing (CONTRACT.md §8): a server span per request from `@fastify/otel`
 * (route template, method, status; `traceparent` continued) and a client span per MongoDB
 * command from the driver's instrumentation. It patches the driver as it loads, so this must
 * run before anything imports `mongodb`: `server.ts` imports the service only afterwards.
 *
 * The OTLP exporter reads `OTEL_EXPORTER_OTLP_ENDPOINT` (and the other standard `OTEL_*`
 * settings); the sampler follows `OTEL_TRACES_SAMPLER`, parent-based always-on by default.
 * Tests pass their own exporter, which is then flushed on every span.
 */
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
    if (span.kind === SpanKind.SERVER && typeof status === 'number' && status < 500 && span.status.code === SpanStatusCode.ERROR) {
      // The SDK's setStatus never goes back to UNSET; the span is still open here (onEnding).
      (span as { status: SpanStatus }).status = { code: SpanStatusCode.UNSET }
    }
  },
  onEnd () {},
  forceFlush: async () => {},
  shutdown: async () => {}
}

export function startTracing (exporter?: SpanExporter): Tracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME ?? 'listing-api',
      [ATTR_SERVICE_VERSION]: PACKAGE.version
    }),
    spanProcessors: [clientErrorsAreNotSpanErrors, exporter === undefined ? new BatchSpanProcessor(new OTLPTraceExporter()) : new SimpleSpanProcessor(exporter)]
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
      // Statement text off: filters can carry personal data (names, e-mail addresses).
      new MongoDBInstrumentation({ enhancedDatabaseReporting: false })
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
