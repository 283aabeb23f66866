// A reply damaged between the database and the service (a faulty middlebox, a flipped bit on a
// link without checksums): the list answers 503 DATABASE_UNAVAILABLE with Retry-After, never a
// 500 or a page built from the damage, and the next request is served.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { build } from '../helpers/build.js'
import { QUERY_TIMEOUT_MS, proxiedDatabase } from './fault-app.js'

t.setTimeout(60_000)
const proxy = await proxiedDatabase(t)
const logLines: Array<Record<string, unknown>> = []
const fastify = await build(t, { databaseUri: proxy.uri, config: { QUERY_TIMEOUT_MS }, logLines })
const project = new ObjectId()
await fastify.database.db().collection('projects').insertOne({ _id: project, name: 'Garbled' })
const url = `/projects?filter=${encodeURIComponent(JSON.stringify({ _id: String(project) }))}`
const isFind = (command: Record<string, unknown>): boolean => command.find === 'projects'

/** Where the first document of the reply's first batch starts. */
function firstDocument (frame: Buffer): number {
  const at = frame.indexOf('firstBatch\0')
  if (at < 0) throw new Error('not a cursor reply')
  // The array's length, then its element "0": a type byte, the name with its NUL, the document.
  return at + 'firstBatch\0'.length + 4 + 1 + 2
}

// The OP_MSG header is 16 bytes, then the flags (4) and the kind of section 0 (1): the reply's document.
const REPLY = 16 + 4 + 1
const damages: Record<string, (frame: Buffer) => void> = {
  'an element of an unknown type in a document': (frame) => { frame[firstDocument(frame) + 4] = 0x20 },
  'a document longer than its batch': (frame) => { frame.writeInt32LE(1 << 20, firstDocument(frame)) },
  'a document whose last byte is not its NUL': (frame) => {
    const at = firstDocument(frame)
    frame[at + frame.readInt32LE(at) - 1] = 1
  },
  'a reply whose own length lies': (frame) => { frame.writeInt32LE(1 << 20, REPLY) },
  'a reply with an element of an unknown type': (frame) => { frame[REPLY + 4] = 0x20 }
}

t.equal((await fastify.inject(url)).statusCode, 200, 'the page is served undamaged')
for (const [name, damage] of Object.entries(damages)) {
  t.test(name, async (t) => {
    let damaged = 0
    proxy.rewriteReply(isFind, (frame) => {
      damaged++
      const copy = Buffer.from(frame)
      damage(copy)
      return copy
    })
    logLines.length = 0
    const res = await fastify.inject(url)
    t.equal(damaged, 1, 'the reply to the page\'s find was damaged')
    t.equal(res.statusCode, 503)
    t.match(res.json(), { code: 'DATABASE_UNAVAILABLE', detail: /damaged/ })
    t.equal(res.headers['retry-after'], '1')
    t.notMatch(res.body, /BSON|offset|bytes/i, 'nothing of the decoder\'s message in the answer')
    t.ok(logLines.some((line) => line.msg === 'database fault' && line.code === 'DATABASE_UNAVAILABLE'), 'logged as a database fault')
    proxy.heal()
    const again = await fastify.inject(url)
    t.equal(again.statusCode, 200, 'the next request is served')
    t.equal((again.json() as { data: Array<{ name: string }> }).data[0]?.name, 'Garbled')
  })
}
