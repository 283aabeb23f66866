// With hazards, the majority commit point lags the latest write, as on a replica set whose
// secondaries are behind: majority reads see the data as of that point and carry it as their
// operationTime (jstests/replsets/operation_time_read_and_write_concern.js), afterClusterTime
// waits for it within maxTimeMS (50), w: "majority" writes are acknowledged once it passes them,
// change streams return only what it has passed, and the driver's causally consistent sessions
// read their own writes through it (causal-consistency spec, "Server Commands").
import { MongoClient, MongoServerError, Timestamp, type Db } from 'mongodb'
import t, { type Test } from 'tap'
import type { HazardControls } from '../../offline-mongodb/hazards.js'
import { until } from '../helpers/until.js'
import { nextEvents, standIn, within } from './stand-in.js'

/** A majority point that moves only when the test moves it, and no other hazard. */
const HELD = {
  hazards: { seed: 5, majorityLagMs: 'manual' as const, maxReplyDelayMs: 0, emptyBatches: 0, shortBatches: 0 }
}
/** Writes acknowledged before the majority point passes them, as w: 1 is on a replica set. */
const W1 = { writeConcern: { w: 1 } }

interface Item { _id: number, v: string }
interface Bare { _id: number }

async function held (t: Test): Promise<{
  server: { uri: string }, client: MongoClient, db: Db, hazards: HazardControls
}> {
  const { server, client, dbName } = await standIn(t, HELD, W1)
  return { server, client, db: client.db(dbName()), hazards: server.hazards as HazardControls }
}

const codeOf = async (run: Promise<unknown>): Promise<unknown> =>
  ((await run.then(() => undefined, (e: unknown) => e)) as MongoServerError | undefined)?.code

t.test('a majority read sees the data as of the majority point, a local read the latest write; ' +
  'both the same once it moves on', async (t) => {
  const { db, hazards } = await held(t)
  const items = db.collection<Item>('items')
  const atMajority = db.collection<Item>('items', { readConcern: { level: 'majority' } })
  await items.insertMany([{ _id: 1, v: 'old' }, { _id: 2, v: 'deleted' }])
  await db.collection<Bare>('dropped').insertOne({ _id: 1 })
  const committed = hazards.advanceMajority()
  await items.updateOne({ _id: 1 }, { $set: { v: 'new' } })
  await items.deleteOne({ _id: 2 })
  await items.insertOne({ _id: 3, v: 'inserted' })
  await db.collection('dropped').drop()
  t.ok(hazards.latestTime.toBigInt() > hazards.majorityTime.toBigInt(), 'the majority point is behind the latest write')

  t.same(await atMajority.find().sort({ _id: 1 }).toArray(), [{ _id: 1, v: 'old' }, { _id: 2, v: 'deleted' }],
    'find at majority: the old state')
  t.same(await items.find().sort({ _id: 1 }).toArray(), [{ _id: 1, v: 'new' }, { _id: 3, v: 'inserted' }],
    'find at local: the latest')
  t.same(await atMajority.findOne({ _id: 1 }), { _id: 1, v: 'old' }, 'also by _id')
  const counted = await db.command({ count: 'items', query: {}, readConcern: { level: 'majority' } })
  t.equal(counted.n, 2, 'count at majority')
  t.ok((counted.operationTime as Timestamp).equals(committed), 'its operationTime is the majority point')
  const joined = await atMajority.aggregate([
    { $match: { _id: 1 } }, { $lookup: { from: 'dropped', pipeline: [], as: 'before' } }
  ]).toArray()
  t.same(joined, [{ _id: 1, v: 'old', before: [{ _id: 1 }] }],
    'aggregate and $lookup at majority: the dropped collection is still there')

  hazards.advanceMajority()
  t.same(await atMajority.find().sort({ _id: 1 }).toArray(), [{ _id: 1, v: 'new' }, { _id: 3, v: 'inserted' }],
    'the point moved on: the new state')
  t.same(await db.collection('dropped', { readConcern: { level: 'majority' } }).find().toArray(), [])
})

t.test('afterClusterTime waits for the majority point, within maxTimeMS (50), and may not pass ' +
  'the cluster time (72)', async (t) => {
  const { db, hazards } = await held(t)
  await db.collection<Item>('items').insertOne({ _id: 1, v: 'old' })
  hazards.advanceMajority()
  const written = await db.command({
    update: 'items', updates: [{ q: { _id: 1 }, u: { $set: { v: 'new' } } }], writeConcern: { w: 1 }
  })
  const after = written.operationTime as Timestamp

  const local = await db.command({ find: 'items', readConcern: { afterClusterTime: after } })
  t.same(local.cursor.firstBatch, [{ _id: 1, v: 'new' }], 'a local read after the write answers at once')

  // The stand-in (in this process, on this clock) gives up only once Date.now() has reached its
  // arrival + maxTimeMS: it asks the clock again after each wake, so a timer that fires a ms early
  // waits on. The command arrives after `started`: the exact bound, no slack.
  const maxTimeMS = 200
  const started = Date.now()
  const code = await codeOf(db.command({
    find: 'items', readConcern: { level: 'majority', afterClusterTime: after }, maxTimeMS
  }))
  const waited = Date.now() - started
  t.equal(code, 50, 'MaxTimeMSExpired while the majority point stays behind')
  t.ok(waited >= maxTimeMS, `after maxTimeMS (${waited} ms, at least ${maxTimeMS})`)

  const waiting = db.command({ find: 'items', readConcern: { level: 'majority', afterClusterTime: after } })
  t.ok(await until(() => hazards.waiting === 1, 5000), 'the read waits')
  hazards.advanceMajority()
  const read = await within(waiting, 5000, 'the waiting read')
  t.same(read.cursor.firstBatch, [{ _id: 1, v: 'new' }],
    'and answers once the point reaches its afterClusterTime, with the write')
  t.equal(hazards.waiting, 0)

  const future = new Timestamp({ t: hazards.latestTime.t + 100, i: 1 })
  t.equal(await codeOf(db.command({ find: 'items', readConcern: { afterClusterTime: future } })), 72,
    'InvalidOptions beyond the cluster time')
})

t.test('a w: "majority" write (the default) is acknowledged once the point passes it; ' +
  'wtimeout gives WriteConcernFailed (64)', async (t) => {
  const { server, db, hazards } = await held(t)
  const defaults = await new MongoClient(server.uri, { serverSelectionTimeoutMS: 2000 }).connect()
  t.teardown(async () => { await defaults.close() })
  let acknowledged = false
  const writing = defaults.db(db.databaseName).collection<Item>('items').insertOne({ _id: 1, v: 'majority' })
    .then(() => { acknowledged = true })
  t.ok(await until(() => hazards.waiting === 1, 5000), 'the write waits for the majority point')
  t.notOk(acknowledged)
  hazards.advanceMajority()
  await within(writing, 5000, 'the acknowledgement')
  t.same(await db.collection<Item>('items', { readConcern: { level: 'majority' } }).findOne({ _id: 1 }),
    { _id: 1, v: 'majority' }, 'acknowledged: a majority read sees it')

  const error = await db.collection<Item>('items')
    .insertOne({ _id: 2, v: 'late' }, { writeConcern: { w: 'majority', wtimeoutMS: 100 } }).catch((e: unknown) => e)
  t.match(error, { code: 64 }, 'WriteConcernFailed after wtimeout')
  t.same(await db.collection<Item>('items').findOne({ _id: 2 }), { _id: 2, v: 'late' }, 'the write itself was made')
})

t.test('a causally consistent session reads its own write at majority: ' +
  'the driver sends afterClusterTime', async (t) => {
  const { client, db, hazards } = await held(t)
  const items = db.collection<Item>('items')
  await items.insertOne({ _id: 1, v: 'old' })
  hazards.advanceMajority()
  const session = client.startSession({ causalConsistency: true })
  t.teardown(async () => { await session.endSession() })
  await items.updateOne({ _id: 1 }, { $set: { v: 'mine' } }, { session })
  const reading = db.collection<Item>('items', { readConcern: { level: 'majority' } }).findOne({ _id: 1 }, { session })
  t.ok(await until(() => hazards.waiting === 1, 5000), 'the read waits for the point its session has seen')
  const point = hazards.advanceMajority()
  t.same(await within(reading, 5000, 'the session read'), { _id: 1, v: 'mine' })
  t.ok(session.operationTime?.equals(point), 'the session keeps the majority read\'s operationTime')
})

t.test('a change stream returns an event once the majority point has passed it, ' +
  'and its token stays before it', async (t) => {
  const { db, hazards } = await held(t)
  const stream = db.collection<Bare>('items').watch([], { maxAwaitTimeMS: 100 })
  t.teardown(async () => { await stream.close() })
  t.equal(await stream.tryNext(), null)
  await db.collection<Bare>('items').insertOne({ _id: 1 })
  t.equal(await stream.tryNext(), null, 'not while the write is not majority-committed')
  const before = stream.resumeToken as { _data: string }
  hazards.advanceMajority()
  const [event] = await nextEvents(stream, 1)
  t.match(event, { operationType: 'insert', documentKey: { _id: 1 } })
  t.ok(before._data < (event?._id as { _data: string })._data, 'the token of the empty batch is before the event')
})

t.test('updateLookup reads the document at the majority point', async (t) => {
  const { db, hazards } = await held(t)
  const items = db.collection<Item>('items')
  await items.insertOne({ _id: 1, v: 'a' })
  const stream = items.watch([], { fullDocument: 'updateLookup', maxAwaitTimeMS: 100 })
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await items.updateOne({ _id: 1 }, { $set: { v: 'b' } })
  hazards.advanceMajority()
  await items.updateOne({ _id: 1 }, { $set: { v: 'c' } })
  const [event] = await nextEvents(stream, 1)
  t.match(event, { operationType: 'update', updateDescription: { updatedFields: { v: 'b' } } })
  t.same(event?.fullDocument, { _id: 1, v: 'b' }, 'not the later, uncommitted state')
})

t.test('by itself the majority point catches up within majorityLagMs, unless held', async (t) => {
  const { client, dbName, server } =
    await standIn(t, { hazards: { seed: 9, majorityLagMs: 40, maxReplyDelayMs: 0 } }, W1)
  const hazards = server.hazards as HazardControls
  const items = client.db(dbName()).collection<Item>('items')
  await items.insertOne({ _id: 1, v: 'w1' })
  const atMajority = items.db.collection<Item>('items', { readConcern: { level: 'majority' } })
  t.ok(await until(async () => (await atMajority.findOne({ _id: 1 })) !== null, 5000),
    'a w: 1 write reaches the majority point')
  t.ok(hazards.majorityTime.equals(hazards.latestTime))
  await items.insertOne({ _id: 2, v: 'majority' }, { writeConcern: { w: 'majority' } })
  t.same(await atMajority.findOne({ _id: 2 }), { _id: 2, v: 'majority' },
    'a majority write is seen at majority once acknowledged')

  await client.db('admin').command({ offlineHazards: 'holdMajority' })
  const error = await items.insertOne({ _id: 3, v: 'held' }, { writeConcern: { w: 'majority', wtimeoutMS: 200 } })
    .catch((e: unknown) => e)
  t.match(error, { code: 64 }, 'held: not committed in five times majorityLagMs')
  await client.db('admin').command({ offlineHazards: 'releaseMajority' })
  t.ok(await until(async () => (await atMajority.findOne({ _id: 3 })) !== null, 5000), 'released: it catches up')
})

t.test('the offlineHazards command reports and moves the majority point; ' +
  'without hazards it is unknown (59)', async (t) => {
  const { client, db } = await held(t)
  const admin = client.db('admin')
  await db.collection<Bare>('items').insertOne({ _id: 1 })
  const status = await admin.command({ offlineHazards: 'status' })
  t.ok((status.latestTime as Timestamp).toBigInt() > (status.majorityTime as Timestamp).toBigInt())
  const advanced = await admin.command({ offlineHazards: 'advanceMajority' })
  t.ok((advanced.majorityTime as Timestamp).equals(advanced.latestTime as Timestamp))
  t.equal(await codeOf(db.command({ offlineHazards: 'status' })), 13, 'on admin only')
  t.equal(await codeOf(admin.command({ offlineHazards: 'explode' })), 2)

  const plain = await standIn(t)
  t.equal(plain.server.hazards, undefined)
  t.equal(await codeOf(plain.client.db('admin').command({ offlineHazards: 'status' })), 59)
})
