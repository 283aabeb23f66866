// The entry point. OpenTelemetry instrumentation patches the MongoDB driver as it loads, so when
// tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT) it starts before the service is imported; when it
// is off, none of its modules load. OTEL_SDK_DISABLED=true turns it off as in every OpenTelemetry SDK.
import { readOptions } from './lib/command-line.js'
import { configHelp } from './plugins/config.js'
import type { Tracing } from './telemetry/tracing.js'

// `npm start -- --help` prints the configuration variables and exits; an unknown option is refused.
readOptions(configHelp(), {})

const { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: disabled } = process.env
let tracing: Tracing | undefined
if (endpoint !== undefined && endpoint !== '' && disabled?.toLowerCase() !== 'true') {
  const { startTracing } = await import('./telemetry/tracing.js')
  tracing = startTracing()
}
const { runService } = await import('./process/service.js')
await runService({ onClosed: tracing?.shutdown, tracingEndpoint: tracing === undefined ? undefined : endpoint })
