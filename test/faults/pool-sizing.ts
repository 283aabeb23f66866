// `npx tsx test/faults/pool-sizing.ts`: how the pool settings decide whether a slow database is
// served. For each (minPoolSize, maxConnecting) pair — set in the URI, which wins over the
// service's own — a service process starts from cold behind the fault proxy with every reply
// delayed QUERY_TIMEOUT_MS / 2, and bursts of concurrent requests go to it as soon as it listens.
// Prints, per pair and burst size, how many requests got 200 and the slowest answer.
import { start } from '../../offline-mongodb/server.js'
import { seedDemoData } from '../../demo-data/seed.js'
import { startFaultProxy } from './fault-proxy.js'
import { get, startService, untilReady } from './service-process.js'

const QUERY_TIMEOUT_MS = 5000
const DELAY_MS = QUERY_TIMEOUT_MS / 2
const PAIRS: Array<[number, number]> = [[0, 2], [5, 10], [20, 20], [20, 30], [30, 40]]
const BURSTS = [10, 50, 100]

const database = await start()
const proxy = await startFaultProxy({ host: '127.0.0.1', port: database.port })
await seedDemoData(`mongodb://127.0.0.1:${proxy.port}/?directConnection=true`, 'sizing')
const projects = await (async () => {
  const service = await startService({ MONGODB_URI: proxy.uri, MONGODB_DB: 'sizing' })
  const body = (await get(`${service.url}/projects?limit=100&fields=_id`)).body as { data: Array<{ _id: string }> }
  service.child.kill('SIGKILL')
  return body.data.map((p) => p._id)
})()
const urls = projects.flatMap((id) => ['sessions', 'activities', 'registrations', 'places']
  .map((kind) => `/projects/${id}/${kind}?limit=20`))

console.log(`every reply delayed ${DELAY_MS} ms, QUERY_TIMEOUT_MS=${QUERY_TIMEOUT_MS}; ` +
  'a burst starts as soon as /ready answers 200')
console.log('| minPoolSize | maxConnecting | start (s) | ' +
  BURSTS.map((n) => `${n} at once: 200s, slowest`).join(' | ') + ' |')
console.log('|---|---|---|' + BURSTS.map(() => '---').join('|') + '|')
for (const [minPoolSize, maxConnecting] of PAIRS) {
  const cells: string[] = []
  let startSeconds = 0
  for (const size of BURSTS) {
    proxy.slow(DELAY_MS)
    const started = Date.now()
    const service = await startService({
      MONGODB_URI: `${proxy.uri}&minPoolSize=${minPoolSize}&maxConnecting=${maxConnecting}`,
      MONGODB_DB: 'sizing',
      QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS)
    })
    await untilReady(service.url, 4 * (QUERY_TIMEOUT_MS + 500))
    startSeconds = (Date.now() - started) / 1000
    const outcomes = await Promise.all(Array.from({ length: size }, async (_, i) => {
      const begun = Date.now()
      const { status } = await get(`${service.url}${urls[i % urls.length] as string}`)
      return { status, ms: Date.now() - begun }
    }))
    cells.push(`${outcomes.filter((o) => o.status === 200).length}/${size}, ` +
      `${Math.max(...outcomes.map((o) => o.ms))} ms`)
    service.child.kill('SIGKILL')
    proxy.heal()
  }
  console.log(`| ${minPoolSize} | ${maxConnecting} | ${startSeconds.toFixed(1)} | ${cells.join(' | ')} |`)
}
await proxy.close()
await database.close()
