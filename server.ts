// The entry point. OpenTelemetry instrumentation patches the MongoDB driver as it loads, so when
// tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT) it starts before the service is imported; when it
// is off, none of its modules load. OTEL_SDK_DISABLED=true turns it off as in every OpenTelemetry SDK.
import { setFlagsFromString } from 'node:v8'
import { readOptions } from './command-line.js'
import { configHelp } from './plugins/config.js'
import type { Tracing } from './telemetry/tracing.js'

// `npm start -- --help` prints the configuration variables and exits; an unknown option is refused.
readOptions(configHelp(), {})

// V8 moves the objects of an allocation site straight to the old generation once many of them
// outlive a young-generation collection. Under load a request's objects (parsed query, driver
// session, reply) are caught alive often enough for that, and then every request's garbage
// waits for a full collection: under the benchmark mix, about 0.7 MB promoted at each
// young-generation collection with it on, under 1 KB with it off (docs/performance.md, "A steady
// tail"). Read by the collector as it runs, so set here rather than on every command line that
// starts the service; the young generation's size is not, and is on those command lines.
setFlagsFromString('--no-allocation-site-pretenuring')

const { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: disabled } = process.env
let tracing: Tracing | undefined
if (endpoint !== undefined && endpoint !== '' && disabled?.toLowerCase() !== 'true') {
  const { startTracing } = await import('./telemetry/tracing.js')
  tracing = startTracing()
}
const { runService } = await import('./service.js')
await runService({ onClosed: tracing?.shutdown, tracingEndpoint: tracing === undefined ? undefined : endpoint })
