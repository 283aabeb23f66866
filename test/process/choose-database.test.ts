import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { MongoClient } from 'mongodb'
import t from 'tap'
import { chooseDatabase, describeDatabase, ProductionNeedsMongoError } from '../../process/choose-database.js'
import { ConfigError } from '../../plugins/config.js'
import { NODE, nodeArgs } from '../helpers/node-child.js'
import { fakeMemoryServer } from '../helpers/fake-memory-server.js'

const ROOT = join(import.meta.dirname, '..', '..')
/** The probe's time in the test below: what a silent download site costs. */
const PROBE_MS = 500
/**
 * What the choice does in this process around the probe's wait: reading the configuration and the
 * failure mark, the first fetch's set-up, the abort reaching the caller; a busy machine's event loop.
 */
const PROBE_SLACK_MS = 500
/** Node's timers keep time in whole ms on a clock of their own: one may fire up to 1 ms early as Date.now() sees it. */
const TIMER_ROUNDING_MS = 1
/** Importing the in-process stand-in (a first import compiles offline-mongodb/ through tsx) and starting it. */
const STAND_IN_START_MS = 2000
/**
 * The catastrophic regex below, bounded: one test stops at 1,000,000 backtracks (BACKTRACK_LIMIT,
 * offline-mongodb/regex.ts), which V8 runs in well under a second; ten leave room for a busy
 * machine. Unbounded it would never end (exponentially many ways to split 5000 a's): any bound tells them apart.
 */
const BOUNDED_REGEX_MS = 10_000

t.test('MONGODB_URI wins, whatever EMBEDDED_DATABASE says', async (t) => {
  const db = await chooseDatabase({ env: { MONGODB_URI: 'mongodb://db.internal:27017', EMBEDDED_DATABASE: 'mongod' } })
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

t.test('an EMBEDDED_DATABASE it does not know stops the choice, naming the variable', async (t) => {
  const error = await chooseDatabase({ env: { EMBEDDED_DATABASE: 'docker' } }).catch((e: unknown) => e)
  t.ok(error instanceof ConfigError)
  t.match((error as Error).message,
    'EMBEDDED_DATABASE="docker" is not allowed: EMBEDDED_DATABASE takes one of auto, mongod, stand-in')
})

t.test('without MONGODB_URI an embedded database is started: ' +
  'a replica set whose changes can be watched', async (t) => {
  // The one the environment asks for (EMBEDDED_DATABASE; CI's stand-in runs ask for the stand-in).
  const db = await chooseDatabase({ env: { EMBEDDED_DATABASE: process.env.EMBEDDED_DATABASE } })
  t.teardown(db.close)
  t.ok(db.embedded)
  t.match(db.kind, /^(mongodb-memory-server|offline-mongodb)$/)
  t.match(describeDatabase(db), /no MONGODB_URI/)
  const client = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 3000 }).connect()
  t.teardown(() => client.close())
  t.type((await client.db('admin').command({ hello: 1 })).setName, 'string', `${db.kind} is a replica set`)
  const collection = client.db('choose').collection<{ _id: number }>('watched')
  const stream = collection.watch()
  t.teardown(() => stream.close())
  await stream.tryNext()
  await collection.insertOne({ _id: 1 })
  t.match(await stream.next(), { operationType: 'insert', documentKey: { _id: 1 } }, 'a change stream sees an insert')
})

t.test('a download site that does not answer costs the probe\'s time, said at once, then the stand-in', async (t) => {
  // A site that accepts connections and never answers, as a firewall that drops packets.
  const silent = net.createServer(() => {})
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.close() })
  const sockets = new Set<net.Socket>()
  // What happened, in order: the service's words and the probe's connection.
  const events: string[] = []
  silent.on('connection', (socket) => { sockets.add(socket); events.push('probe connected') })
  t.teardown(() => { for (const socket of sockets) socket.destroy() })
  // tap's testdir is removed when the test ends.
  const failureMark = join(t.testdir({}), 'mark')
  const started = Date.now()
  const env = { MONGOMS_DOWNLOAD_MIRROR: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}` }
  // No mongod binary, whatever is installed: mongodb-memory-server is a fake that finds none.
  const { memoryServer, calls } = fakeMemoryServer({ binary: undefined })
  const db = await chooseDatabase({
    env, memoryServer, probeTimeoutMs: PROBE_MS, failureMark, onProgress: (message) => events.push(message)
  })
  t.teardown(db.close)
  const took = Date.now() - started
  t.match(events[0], /no MONGODB_URI: starting an embedded database/,
    'what is tried is said first, before the probe waits')
  t.ok(events.indexOf('probe connected') > 0, `then the probe connects: ${events.join(' | ')}`)
  t.equal(db.kind, 'offline-mongodb')
  t.match(db.reason, new RegExp(`did not answer in ${PROBE_MS} ms`))
  t.same(calls.downloaded, [], 'no download was started')
  // The mark's first line is when the probe gave up (Date.now(), in this process).
  const probeTook = Number(readFileSync(failureMark, 'utf8').split('\n')[0]) - started
  t.ok(probeTook >= PROBE_MS - TIMER_ROUNDING_MS && probeTook <= PROBE_MS + PROBE_SLACK_MS,
    `the probe gave up after ${probeTook} ms (its time, ${PROBE_MS} ms, and at most ${PROBE_SLACK_MS} ms more)`)
  t.ok(took <= PROBE_MS + PROBE_SLACK_MS + STAND_IN_START_MS, `the stand-in chosen after ${took} ms: the probe, ` +
    `then ${took - probeTook} ms to start the stand-in (at most ${STAND_IN_START_MS} ms)`)
  const again = await chooseDatabase({ env, memoryServer, probeTimeoutMs: PROBE_MS, failureMark })
  t.teardown(again.close)
  t.match(again.reason, /download failed recently/, 'the failure is remembered: the next start does not ask again')
  t.same(calls.located.length, 1, 'nor look for a binary')
})

t.test('npm start\'s stand-in runs in a process of its own, bounds its regex tests there, ' +
  'and stops with its parent', async (t) => {
  const db = await chooseDatabase({ env: { EMBEDDED_DATABASE: 'stand-in' }, standInProcess: true })
  t.teardown(db.close)
  t.equal(db.kind, 'offline-mongodb')
  const client = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 3000 }).connect()
  t.teardown(() => client.close())
  const collection = client.db('choose').collection<{ v: string }>('regex')
  await collection.insertOne({ v: `${'a'.repeat(5000)}!` })
  // Exponential in the subject: answered only because the process has V8's backtrack limit. The
  // test waits BOUNDED_REGEX_MS, so that a process without the limit fails here.
  const started = Date.now()
  let timer: NodeJS.Timeout | undefined
  const late = new Promise((resolve) => {
    timer = setTimeout(() => { resolve(`no answer in ${BOUNDED_REGEX_MS} ms`) }, BOUNDED_REGEX_MS)
  })
  const found = await Promise.race([collection.find({ v: { $regex: '^(a|aa)+$' } }).toArray(), late])
  clearTimeout(timer)
  t.same(found, [], `the catastrophic regex is a non-match, answered in ${Date.now() - started} ms ` +
    `(waited for at most ${BOUNDED_REGEX_MS} ms)`)
  await client.close()
  await db.close()
  const error = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 500 }).connect().catch((e: unknown) => e)
  t.ok(error instanceof Error, 'closed: nothing listens any more')
})

t.test('the stand-in\'s process ends when its standard input does (its parent has gone)', async (t) => {
  const child = spawn(NODE, nodeArgs(['--import', 'tsx', 'offline-mongodb/cli.ts', '--port', '0', '--with-stdin']),
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const uri = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve))
  t.match(uri, /^mongodb:\/\/127\.0\.0\.1:\d+/)
  child.stdin.end()
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  t.equal(await exited, 0, 'exits 0')
  clearTimeout(timer)
})
