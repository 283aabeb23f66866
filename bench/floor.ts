// The floor: a bare node:http server making the service's driver calls for the benchmark mix,
// with the queries pre-built and the answer made by JSON.stringify. What it costs is the
// unavoidable part of a list request: HTTP, the driver, JSON.
// FLOOR_RAW=1 makes the second floor: the driver's `raw` option, and the documents written
// from their bytes to JSON by a schema-less transcoder (no objects either).
import http from 'node:http'
import { MongoClient } from 'mongodb'
import { documentsToJson } from '../list-endpoint/bson-json.js'
import { buildGrowth, buildMix } from './mix.js'

const uri = process.env.MONGODB_URI as string
const maxTimeMS = Number(process.env.QUERY_TIMEOUT_MS ?? 5000)
const client = await new MongoClient(uri, { serverSelectionTimeoutMS: 3000 }).connect()
const db = client.db(process.env.MONGODB_DB ?? 'listing')
const raw = process.env.FLOOR_RAW === '1'
const growth = await buildGrowth(db)
const mix = new Map([...await buildMix(db), ...growth.pageSize, ...growth.inSize].map((entry) => [entry.path, entry]))

const server = http.createServer((req, res) => {
  const entry = mix.get(req.url ?? '')
  if (entry === undefined) {
    res.writeHead(404).end()
    return
  }
  const answer = async () => {
    if (entry.projectId !== undefined) {
      const project = await db.collection('projects')
        .findOne({ _id: entry.projectId }, { projection: { _id: 1 }, maxTimeMS })
      if (project === null) throw new Error('project not found')
    }
    const collection = db.collection(entry.collection)
    const { filter, sort, skip, limit, projection, collation } = entry
    const inCollation = collation === undefined ? {} : { collation }
    const [found, total] = await Promise.all([
      collection.find(filter, { projection, sort, skip, limit, maxTimeMS, raw, ...inCollation }).toArray(),
      entry.count ? collection.countDocuments(filter, { maxTimeMS, ...inCollation }) : undefined
    ])
    const tail = `,"limit":${limit},"skip":${skip}${total === undefined ? '' : `,"total":${total}`}}`
    return raw
      ? documentsToJson(found as unknown as Buffer[], '{"data":', tail)
      : JSON.stringify(total === undefined ? { data: found, limit, skip } : { data: found, limit, skip, total })
  }
  answer().then((body) => {
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body)
    }).end(body)
  }, () => {
    res.writeHead(500).end()
  })
})

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address() as { port: number }
  console.log(`floor${raw ? ' (raw)' : ''} listening on http://127.0.0.1:${address.port}`)
})
process.once('SIGTERM', () => { server.close(); client.close().finally(() => process.exit(0)) })
