// The driver's share of a list page, in a process of its own (bench/http.ts starts it, pinned
// like the servers): client CPU per page read three ways from the same database (the replay):
// - findPage (list-endpoint/find-page.ts): one `find` through Db#command with `raw`, as the service reads;
// - the driver's FindCursor with `raw`, then toArray (the driver's own path);
// - the driver's FindCursor, decoded (the floor's way).
// And a page's count the same three ways: countMatching (list-endpoint/count-matching.ts), one
// `aggregate` through Db#command; the driver's AggregationCursor with `raw`; countDocuments.
// Protocol: prints `recorded` once every query has run once (the replay is recording), then
// waits for `go` on stdin, measures, and prints one JSON line of figures.
import { createInterface } from 'node:readline'
import { MongoClient } from 'mongodb'
import { countMatching } from '../list-endpoint/count-matching.js'
import { findPage } from '../list-endpoint/find-page.js'
import { buildGrowth } from './mix.js'
import { median } from './timing.js'

export interface DriverFigure {
  page: string
  /** What the service calls: findPage, or countMatching for a count. */
  way: string
  serviceUs: number
  rawCursorUs: number
  cursorUs: number
  /** The service's way ÷ the raw cursor, and ÷ the decoded one (medians of the rounds' ratios). */
  ratio: number
  vsDecoded: number
}

const ROUNDS = 5
const CALLS = 1500
const CONCURRENCY = 10

const client = await new MongoClient(process.env.MONGODB_URI as string, { serverSelectionTimeoutMS: 5000 }).connect()
const db = client.db(process.env.MONGODB_DB ?? 'listing')
const { pageSize } = await buildGrowth(db)
const signal = new AbortController().signal
/** A read measured three ways: the service's, then the driver's raw and decoded cursors. */
interface Read { page: string, way: string, ways: Record<'service' | 'rawCursor' | 'cursor', () => Promise<unknown>> }

const pages: Read[] = pageSize.filter((entry) => entry.limit === 20 || entry.limit === 100).map((entry) => {
  const query = {
    filter: entry.filter, sort: entry.sort, projection: entry.projection, skip: entry.skip, limit: entry.limit + 1
  }
  const collection = db.collection(entry.collection)
  return {
    page: `${entry.limit} registrations`,
    way: 'findPage',
    ways: {
      service: async () => await findPage(db, entry.collection, query, { maxTimeMS: 5000, signal }),
      rawCursor: async () =>
        await collection.find(query.filter, { ...query, batchSize: query.limit, raw: true, maxTimeMS: 5000 }).toArray(),
      cursor: async () =>
        await collection.find(query.filter, { ...query, batchSize: query.limit, maxTimeMS: 5000 }).toArray()
    }
  }
})
const counted = pageSize.find((entry) => entry.limit === 20)
if (counted !== undefined) {
  const collection = db.collection(counted.collection)
  const pipeline = [{ $match: counted.filter }, { $group: { _id: 1, n: { $sum: 1 } } }]
  pages.push({
    page: 'the count of the 20 registrations\' filter',
    way: 'countMatching',
    ways: {
      service: async () => await countMatching(db, counted.collection, counted.filter, { maxTimeMS: 5000, signal }),
      rawCursor: async () => await collection.aggregate(pipeline, { raw: true, maxTimeMS: 5000 }).toArray(),
      cursor: async () => await collection.countDocuments(counted.filter, { maxTimeMS: 5000 })
    }
  })
}
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
for (const { page, way, ways } of pages) {
  for (const way of Object.values(ways)) await cpuPerCall(way)
  const runs = { service: [] as number[], rawCursor: [] as number[], cursor: [] as number[] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, way] of Object.entries(ways)) runs[name as keyof typeof runs].push(await cpuPerCall(way))
  }
  figures.push({
    page,
    way,
    serviceUs: median(runs.service),
    rawCursorUs: median(runs.rawCursor),
    cursorUs: median(runs.cursor),
    ratio: median(runs.service.map((x, i) => x / (runs.rawCursor[i] as number))),
    vsDecoded: median(runs.service.map((x, i) => x / (runs.cursor[i] as number)))
  })
}
console.log(JSON.stringify(figures))
await client.close()
process.exit(0)
