// `npm run bench`: every benchmark of the project, a table on stdout and a JSON result file.
import { mkdir, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { benchCompile, printCompile } from './compile.js'

const machine = { cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, platform: `${os.platform()} ${os.release()}` }
console.log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}`)

const compile = benchCompile()
printCompile(compile)

const result = { date: new Date().toISOString(), machine, compile }
const dir = new URL('./results/', import.meta.url)
await mkdir(dir, { recursive: true })
await writeFile(new URL('latest.json', dir), JSON.stringify(result, null, 2) + '\n')
console.log('\nwritten: bench/results/latest.json')
