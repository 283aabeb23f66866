// `npm run db [-- --port 27017 --host 127.0.0.1]`: an offline MongoDB that mongosh-style
// tools, or the service through MONGODB_URI, can connect to. It prints its URI.
// `npm start` without MONGODB_URI runs it too, as a process of its own (process/choose-database.ts).
import { readOptions, usageError } from '../lib/command-line.js'
import { readHazards, type HazardOptions } from './hazard-options.js'
import { REGEX_TESTS_BOUNDED } from './regex.js'
import { start } from './server.js'

const USAGE = `usage: npm run db [-- --port 27017 --host 127.0.0.1]
  Starts the offline MongoDB stand-in (in memory, empty) and prints its URI; Ctrl-C stops it.
  --port        TCP port, 0 for any free one (default 27017)
  --host        interface (default 127.0.0.1)
  --hazards     <seed> or a JSON object of hazard options: slow replies, early change stream
                batches, a lagging majority point, expired pre-images (offline-mongodb/README.md);
                without it, OFFLINE_MONGODB_HAZARDS decides
  --with-stdin  stop when standard input ends (a parent process that started it has gone)
  --help        this text`

const values = readOptions(USAGE, {
  port: { type: 'string', default: '27017' },
  host: { type: 'string', default: '127.0.0.1' },
  hazards: { type: 'string' },
  'with-stdin': { type: 'boolean', default: false }
})
const port = Number(values.port)
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  usageError(USAGE, `--port must be an integer from 0 to 65535, got '${values.port}'`)
}
if (!REGEX_TESTS_BOUNDED) {
  console.error('regex tests are not bounded in backtracking: start node with --allow-natives-syntax (npm run db does)')
}
let hazards: HazardOptions | undefined
try {
  hazards = values.hazards === undefined ? undefined : readHazards(values.hazards)
} catch (error) {
  usageError(USAGE, `--hazards: ${(error as Error).message}`)
}
const db = await start({ port, host: values.host, ...(hazards === undefined ? {} : { hazards }) })
console.log(db.uri)
const stop = (): void => { db.close().then(() => process.exit(0), () => process.exit(1)) }
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
if (values['with-stdin']) process.stdin.once('end', stop).resume()
