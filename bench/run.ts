// `npm run bench [-- --rounds 5 --duration 8 --connections 10 --scale 1 --database replay --skip-http
// --only mix,stages --write docs/performance.md]`: every benchmark of the project, tables on stdout, a JSON result in
// bench/results/ and, with --write, the tables in a Markdown page.
import { mkdir, writeFile } from 'node:fs/promises'
import { execFileSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { readOptions, usageError } from '../lib/command-line.js'
import { SECTIONS, type Section } from './http-types.js'
import { checkWritable, printTable, writeTables } from './report.js'

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
  --only LIST       only these parts of the HTTP benchmark, comma-separated: ${SECTIONS.join(', ')}
                    (e.g. --only mix --rounds 5 --duration 60: five long runs of the mix)
  --baseline DIR    also measure another build of the service side by side with this one: DIR is
                    a checkout with its dist/ built (npm ci && npm run build there); the mix, each
                    of its requests alone (half the duration) and the 1-document page,
                    interleaved (--only baseline: nothing else)
  --write FILE      also write the tables into FILE, between its lines
                    <!-- npm run bench: begin --> and <!-- npm run bench: end -->; the table of
                    --baseline goes between <!-- npm run bench -- --baseline: begin --> and its end
  --help            this text

The database is MONGODB_URI when set, else the offline stand-in in its own process.`

/** A build's name: its commit, when it is a git checkout. */
function baselineName (dir: string): string {
  try {
    return `commit ${execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h'], { encoding: 'utf8' }).trim()}`
  } catch {
    return dir
  }
}

const values = readOptions(USAGE, {
  rounds: { type: 'string', default: '5' },
  duration: { type: 'string', default: '8' },
  connections: { type: 'string', default: '10' },
  scale: { type: 'string', default: '1' },
  database: { type: 'string', default: 'replay' },
  'skip-http': { type: 'boolean', default: false },
  only: { type: 'string' },
  baseline: { type: 'string' },
  write: { type: 'string' }
})
const sections = values.only === undefined ? [...SECTIONS] : values.only.split(',').map((part) => part.trim())
const unknown = sections.filter((part) => !(SECTIONS as readonly string[]).includes(part))
if (unknown.length > 0 || sections.length === 0) {
  usageError(USAGE, `--only takes parts of ${SECTIONS.join(', ')}; not ${unknown.join(', ') || 'nothing'}`)
}
if (sections.includes('baseline') && values.only !== undefined && values.baseline === undefined) {
  usageError(USAGE, '--only baseline measures against --baseline DIR: name it')
}
// The page's main section is every table of one run: one written from a part would leave the
// others out. The comparison with another build has a section of its own.
const onlyBaseline = values.only?.trim() === 'baseline'
if (values.only !== undefined && !onlyBaseline && values.write !== undefined) {
  usageError(USAGE, '--write writes every table: it goes with no --only but --only baseline')
}
const numbers = {
  rounds: Number(values.rounds),
  duration: Number(values.duration),
  connections: Number(values.connections),
  scale: Number(values.scale)
}
if (Object.values(numbers).some((n) => !(n > 0)) || (values.database !== 'replay' && values.database !== 'direct')) {
  usageError(USAGE, '--rounds, --duration, --connections and --scale take positive numbers; ' +
    '--database is replay or direct')
}
const baseline = values.baseline === undefined
  ? undefined
  : { dist: path.resolve(values.baseline, 'dist'), name: baselineName(values.baseline) }
const options = {
  ...numbers,
  database: values.database as 'replay' | 'direct',
  sections: new Set(sections as Section[]),
  ...(baseline === undefined ? {} : { baseline })
}
const writes: Array<'all' | 'baseline'> = [
  ...(onlyBaseline ? [] : ['all' as const]),
  ...(baseline === undefined ? [] : ['baseline' as const])
]
if (values.write !== undefined) await checkWritable(values.write, writes)

const machine = {
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cores: os.cpus().length,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`
}
console.log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}`)

// The benchmarks load the whole service and its floors: only once the options are read, so that
// --help and a wrong option answer without that cost.
const [
  { benchCompile, compileTable }, { benchHistograms, histogramTable }, { benchHttp },
  { baselineTable, httpTables }, { benchSerialize, serializeTable }, { benchSignature, signatureTable }
] = await Promise.all([
  import('./compile.js'), import('./histogram.js'), import('./http.js'),
  import('./http-tables.js'), import('./serialize.js'), import('./signature.js')
])

// --only baseline measures the two builds and nothing else.
const compile = onlyBaseline ? undefined : benchCompile()
const serialize = onlyBaseline ? undefined : benchSerialize()
const signature = onlyBaseline ? undefined : benchSignature()
const histograms = onlyBaseline ? undefined : benchHistograms()
const tables = compile === undefined || serialize === undefined || signature === undefined || histograms === undefined
  ? []
  : [compileTable(compile), serializeTable(serialize), signatureTable(signature), histogramTable(histograms)]
tables.forEach(printTable)
const http = values['skip-http'] ? undefined : await benchHttp(options)
const against = http === undefined ? undefined : baselineTable(http)
if (http !== undefined) {
  const more = httpTables(http)
  more.forEach(printTable)
  tables.push(...more)
}
if (against !== undefined) printTable(against)

const result = { date: new Date().toISOString(), machine, options, compile, serialize, signature, histograms, http }
await mkdir('bench/results', { recursive: true })
await writeFile('bench/results/latest.json', JSON.stringify(result, null, 2) + '\n')
console.log('\nwritten: bench/results/latest.json')
if (values.write !== undefined) {
  const run = `--rounds ${options.rounds} --duration ${options.duration} --connections ${options.connections} ` +
    `--database ${options.database}`
  const measured = `Measured ${new Date().toISOString().slice(0, 10)} on ${machine.cpu}, ` +
    `${machine.cores} cores, Node ${machine.node}`
  if (!onlyBaseline) {
    await writeTables(values.write, 'all',
      `${measured}; \`npm run bench -- ${run}\`${http === undefined ? ' (micro-benchmarks only)' : ''}.`, tables)
  }
  if (against !== undefined) {
    await writeTables(
      values.write, 'baseline',
      `${measured}; \`npm run bench -- ${onlyBaseline ? '--only baseline ' : ''}` +
        `--baseline <checkout of ${options.baseline?.name ?? 'it'}> ${run}\`.`,
      [against]
    )
  }
  console.log(`written: ${values.write}`)
}
