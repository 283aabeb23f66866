// The entry point. OpenTelemetry instrumentation patches the MongoDB driver as it loads, so when
// tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT) it starts before the service is imported; when it
// is off, none of its modules load. OTEL_SDK_DISABLED=true turns it off as in every OpenTelemetry SDK.
import { readOptions } from './lib/command-line.js'
import { ConfigError, readConfig } from './plugins/config.js'
import { configHelp, type Config } from './schemas/config.js'
import type { Tracing } from './telemetry/tracing.js'

// `npm start -- --help` prints the configuration variables and exits; an unknown option is refused.
readOptions(configHelp(), {})
// A configuration problem is one line naming the variable, exit 1, before anything else loads.
let config: Config
try {
  config = readConfig()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  console.error(error.message)
  process.exit(1)
}

const { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: disabled } = process.env
let tracing: Tracing | undefined
if (endpoint !== undefined && endpoint !== '' && disabled?.toLowerCase() !== 'true') {
  const { startTracing } = await import('./telemetry/tracing.js')
  tracing = startTracing()
}
const { runService } = await import('./process/service.js')
await runService({ config, onClosed: tracing?.shutdown, tracingEndpoint: tracing === undefined ? undefined : endpoint })
