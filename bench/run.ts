// `npm run bench [-- --rounds 5 --duration 8 --connections 10 --scale 1 --database replay --skip-http]`:
// every benchmark of the project, tables on stdout and a JSON result in bench/results/.
import { mkdir, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { readOptions, usageError } from '../command-line.js'
import { benchCompile, printCompile } from './compile.js'
import { benchHttp, printHttp } from './http.js'
import { benchSerialize, printSerialize } from './serialize.js'

const USAGE = `npm run bench [-- options]

Runs the compile and BSON-to-JSON micro-benchmarks, then the HTTP benchmark: the service
against two floors, on the demo data. Tables on stdout, JSON in bench/results/latest.json.

  --rounds N        interleaved rounds of the HTTP mix (default 5)
  --duration S      seconds of load per round (default 8)
  --connections N   concurrent connections (default 10)
  --scale N         demo data scale (default 1)
  --database MODE   replay (default: record the database's replies once, answer them from
                    memory) or direct (every request reaches the database)
  --skip-http       micro-benchmarks only
  --help            this text

The database is MONGODB_URI when set, else the offline stand-in in its own process.`

const values = readOptions(USAGE, {
  rounds: { type: 'string', default: '5' },
  duration: { type: 'string', default: '8' },
  connections: { type: 'string', default: '10' },
  scale: { type: 'string', default: '1' },
  database: { type: 'string', default: 'replay' },
  'skip-http': { type: 'boolean', default: false }
})
const numbers = { rounds: Number(values.rounds), duration: Number(values.duration), connections: Number(values.connections), scale: Number(values.scale) }
if (Object.values(numbers).some((n) => !(n > 0)) || (values.database !== 'replay' && values.database !== 'direct')) {
  usageError(USAGE, '--rounds, --duration, --connections and --scale take positive numbers; --database is replay or direct')
}
const options = { ...numbers, database: values.database as 'replay' | 'direct' }

const machine = { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` }
console.log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}`)

const compile = benchCompile()
printCompile(compile)
const serialize = benchSerialize()
printSerialize(serialize)

const http = values['skip-http'] ? undefined : await benchHttp(options)
if (http !== undefined) printHttp(http)

const result = { date: new Date().toISOString(), machine, options, compile, serialize, http }
await mkdir('bench/results', { recursive: true })
await writeFile('bench/results/latest.json', JSON.stringify(result, null, 2) + '\n')
console.log('\nwritten: bench/results/latest.json')
