import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import net from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { chooseDatabase, describeDatabase, ProductionNeedsMongoError } from '../../process/choose-database.js'
import { NODE, nodeArgs } from '../helpers/node-child.js'

const ROOT = join(import.meta.dirname, '..', '..')

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
  // tap's testdir is removed when the test ends.
  const failureMark = join(t.testdir({}), 'mark')
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

t.test('npm start\'s stand-in runs in a process of its own, bounds its regex tests there, and stops with its parent', async (t) => {
  // tap's testdir is removed when the test ends.
  const failureMark = join(t.testdir({}), 'mark')
  // A download that failed a moment ago: the stand-in, without a probe.
  await writeFile(failureMark, `${Date.now()}\nno download in this test`)
  const db = await chooseDatabase({ env: {}, failureMark, standInProcess: true })
  t.teardown(db.close)
  if (db.kind !== 'offline-mongodb') {
    t.comment(`a mongod binary is here (${db.reason}): no stand-in`)
    return
  }
  const client = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 3000 }).connect()
  t.teardown(() => client.close())
  const collection = client.db('choose').collection<{ v: string }>('regex')
  await collection.insertOne({ v: `${'a'.repeat(5000)}!` })
  // Exponential in the subject: answered only because the process has V8's backtrack limit.
  const started = Date.now()
  t.same(await collection.find({ v: { $regex: '^(a|aa)+$' } }).toArray(), [], 'the catastrophic regex is a non-match')
  t.ok(Date.now() - started < 10_000, `answered in ${Date.now() - started} ms`)
  await client.close()
  await db.close()
  const error = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 500 }).connect().catch((e: unknown) => e)
  t.ok(error instanceof Error, 'closed: nothing listens any more')
})

t.test('the stand-in\'s process ends when its standard input does (its parent has gone)', async (t) => {
  const child = spawn(NODE, nodeArgs(['--import', 'tsx', 'offline-mongodb/cli.ts', '--port', '0', '--with-stdin']), { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const uri = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve))
  t.match(uri, /^mongodb:\/\/127\.0\.0\.1:\d+/)
  child.stdin.end()
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  t.equal(await exited, 0, 'exits 0')
  clearTimeout(timer)
})
