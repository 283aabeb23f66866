// `npm run bench [-- --pairs 3 --duration 8 --connections 10 --scale 1 --skip-http]`:
// every benchmark of the project, tables on stdout and a JSON result in bench/results/.
import { mkdir, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { benchCompile, printCompile } from './compile.js'
import { benchHttp, printHttp } from './http.js'
import { benchSerialize, printSerialize } from './serialize.js'

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '10' },
    scale: { type: 'string', default: '1' },
    'skip-http': { type: 'boolean', default: false }
  }
})
const options = { pairs: Number(values.pairs), duration: Number(values.duration), connections: Number(values.connections), scale: Number(values.scale) }
if (Object.values(options).some((n) => !(n > 0))) throw new Error('--pairs, --duration, --connections and --scale take positive numbers')

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
