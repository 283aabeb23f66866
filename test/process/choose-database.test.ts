import { mkdtemp } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { chooseDatabase, describeDatabase, ProductionNeedsMongoError } from '../../process/choose-database.js'

t.test('MONGODB_URI wins', async (t) => {
  const db = await chooseDatabase({ env: { MONGODB_URI: 'mongodb://db.internal:27017' } })
  t.equal(db.kind, 'external')
  t.equal(db.uri, 'mongodb://db.internal:27017')
  t.equal(db.embedded, false)
  t.match(describeDatabase(db), /external \(MONGODB_URI is set\)/)
})

t.test('production without MONGODB_URI is refused', async (t) => {
  const error = await chooseDatabase({ env: { NODE_ENV: 'production' } }).catch((e: unknown) => e)
  t.ok(error instanceof ProductionNeedsMongoError)
  t.match((error as Error).message, /MONGODB_URI is required/)
})

t.test('without MONGODB_URI an embedded database is started and answers the driver', async (t) => {
  const db = await chooseDatabase({ env: {} })
  t.teardown(db.close)
  t.ok(db.embedded)
  t.match(db.kind, /^(mongodb-memory-server|offline-mongodb)$/)
  t.match(describeDatabase(db), /no MONGODB_URI/)
  const client = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 3000 }).connect()
  t.teardown(() => client.close())
  t.equal((await client.db('x').command({ ping: 1 })).ok, 1)
})

t.test('a download site that does not answer costs the probe\'s time, said at once, then the stand-in', async (t) => {
  // A site that accepts connections and never answers, as a firewall that drops packets.
  const silent = net.createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.close() })
  const sockets = new Set<net.Socket>()
  silent.on('connection', (socket) => sockets.add(socket))
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  const failureMark = join(await mkdtemp(join(tmpdir(), 'choose-')), 'mark')
  const heard: Array<{ at: number, message: string }> = []
  const started = Date.now()
  const env = { MONGOMS_DOWNLOAD_MIRROR: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}` }
  const db = await chooseDatabase({ env, probeTimeoutMs: 500, failureMark, onProgress: (message) => heard.push({ at: Date.now() - started, message }) })
  t.teardown(db.close)
  const took = Date.now() - started
  t.match(heard[0]?.message, /no MONGODB_URI: starting an embedded database/, 'what is tried is said first')
  t.ok((heard[0]?.at ?? Infinity) < 100, `said at once (${heard[0]?.at ?? '?'} ms)`)
  if (db.kind === 'mongodb-memory-server') {
    t.comment(`a mongod binary is already here (${db.reason}): no download was tried`)
    return
  }
  t.equal(db.kind, 'offline-mongodb')
  t.match(db.reason, /did not answer in 500 ms/)
  t.ok(took < 500 + 2500, `the stand-in chosen after ${took} ms, bounded by the probe`)
  const again = await chooseDatabase({ env, probeTimeoutMs: 500, failureMark })
  t.teardown(again.close)
  t.match(again.reason, /download failed recently/, 'the failure is remembered: the next start does not ask again')
})
