// The driver's share of a list page, in a process of its own (bench/http.ts starts it, pinned
// like the servers): client CPU per page read three ways from the same database (the replay):
// - findPage (list-endpoint/find-page.ts): one `find` through Db#command with `raw`, as the service reads;
// - the driver's FindCursor with `raw`, then toArray (what the service did before);
// - the driver's FindCursor, decoded (the floor's way).
// Protocol: prints `recorded` once every query has run once (the replay is recording), then
// waits for `go` on stdin, measures, and prints one JSON line of figures.
import { createInterface } from 'node:readline'
import { MongoClient } from 'mongodb'
import { findPage } from '../list-endpoint/find-page.js'
import { buildGrowth } from './mix.js'
import { median } from './timing.js'

export interface DriverFigure { page: string, findPageUs: number, rawCursorUs: number, cursorUs: number, ratio: number }

const ROUNDS = 5
const CALLS = 1500
const CONCURRENCY = 10

const client = await new MongoClient(process.env.MONGODB_URI as string, { serverSelectionTimeoutMS: 5000 }).connect()
const db = client.db(process.env.MONGODB_DB ?? 'listing')
const { pageSize } = await buildGrowth(db)
const signal = new AbortController().signal
const pages = pageSize.filter((entry) => entry.limit === 20 || entry.limit === 100).map((entry) => {
  const query = { filter: entry.filter, sort: entry.sort, projection: entry.projection, skip: entry.skip, limit: entry.limit + 1 }
  const collection = db.collection(entry.collection)
  return {
    page: `${entry.limit} registrations`,
    ways: {
      findPage: async () => await findPage(db, entry.collection, query, { maxTimeMS: 5000, signal }),
      rawCursor: async () => await collection.find(query.filter, { ...query, batchSize: query.limit, raw: true, maxTimeMS: 5000 }).toArray(),
      cursor: async () => await collection.find(query.filter, { ...query, batchSize: query.limit, maxTimeMS: 5000 }).toArray()
    }
  }
})
for (const { ways } of pages) for (const way of Object.values(ways)) await way()
console.log('recorded')
await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once('line', () => resolve()))

/** Client CPU µs per call, CONCURRENCY calls in flight. */
async function cpuPerCall (way: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage()
  let started = 0
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => { while (started++ < CALLS) await way() }))
  const used = process.cpuUsage(before)
  return (used.user + used.system) / CALLS
}

const figures: DriverFigure[] = []
for (const { page, ways } of pages) {
  for (const way of Object.values(ways)) await cpuPerCall(way)
  const runs = { findPage: [] as number[], rawCursor: [] as number[], cursor: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, way] of Object.entries(ways)) runs[name as keyof typeof runs].push(await cpuPerCall(way))
  }
  figures.push({ page, findPageUs: median(runs.findPage), rawCursorUs: median(runs.rawCursor), cursorUs: median(runs.cursor), ratio: median(runs.findPage.map((x, i) => x / (runs.rawCursor[i] as number))) })
}
console.log(JSON.stringify(figures))
await client.close()
process.exit(0)
