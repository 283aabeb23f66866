// With hazards, change stream batches end early as mongos's do when its wait runs out while
// shards still hold events (SERVER-80427, DOCS-16392), their postBatchResumeToken never passing
// an event not returned (change-streams spec, "Why do we need to expose the
// postBatchResumeToken?"); pre-images expire (manual: "Change Streams with Document Pre- and
// Post-Images"); replies are late by seeded amounts. And how the hazards are asked for.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { type Document, type Long, MongoClient, type Timestamp } from 'mongodb'
import t from 'tap'
import { hazardSettings, hazardsFromEnvironment, readHazards } from '../../offline-mongodb/hazard-options.js'
import { ConnectionHazards } from '../../offline-mongodb/hazards.js'
import { start } from '../../offline-mongodb/server.js'
import { NODE, nodeArgs } from '../helpers/node-child.js'
import { nextEvents, opMsg, rawConnection, standIn, within } from './stand-in.js'

interface Token { _data: string }
interface Reply { returned: number, batch: number, token: Token }

const tokenOf = (event: Document | undefined): string => (event?._id as Token)._data

t.test('getMore answers empty or short batches while events wait; each token stays before the first event ' +
  'not returned', async (t) => {
  // Every batch ends early: empty, or after 1 to 3 events.
  const hazards = { seed: 7, maxReplyDelayMs: 0, majorityLagMs: 0, emptyBatches: 0.5, shortBatches: 0.5 }
  const { client, dbName } = await standIn(t, { hazards }, { maxPoolSize: 1 })
  const db = client.db(dbName())
  const opened = await db.command({ aggregate: 'coll', pipeline: [{ $changeStream: {} }], cursor: { batchSize: 0 } },
    { promoteLongs: false })
  const ids = Array.from({ length: 20 }, (_, i) => i)
  await db.collection<{ _id: number }>('coll').insertMany(ids.map((i) => ({ _id: i })))
  const events: Document[] = []
  const replies: Reply[] = []
  for (let i = 0; i < 200 && events.length < ids.length; i++) {
    const { cursor } = await db.command({ getMore: opened.cursor.id as Long, collection: 'coll', maxTimeMS: 50 })
    replies.push({ returned: events.length, batch: cursor.nextBatch.length, token: cursor.postBatchResumeToken })
    events.push(...cursor.nextBatch as Document[])
  }
  t.same(events.map((event) => event.documentKey._id), ids, 'every event, once, in order')
  const early = replies.filter((reply) => reply.batch === 0 && reply.returned < ids.length)
  t.ok(early.length > 0, `${early.length} empty batches while events waited`)
  t.ok(replies.some((reply) => reply.batch > 0 && reply.batch < ids.length - reply.returned), 'and batches cut short')
  for (const { returned, batch, token } of replies) {
    const next = events[returned + batch]
    if (next !== undefined) {
      t.ok(token._data < tokenOf(next), `after ${returned + batch} events the token is before the next one`)
    }
    if (batch > 0) t.ok(token._data >= tokenOf(events[returned + batch - 1]), 'and not before the last one returned')
  }

  const resumeAt = early[0] as Reply
  const resumed = db.collection('coll').watch([], { resumeAfter: resumeAt.token, maxAwaitTimeMS: 50 })
  t.teardown(async () => { await resumed.close() })
  t.same((await nextEvents(resumed, 1))[0]?.documentKey, { _id: resumeAt.returned },
    'resuming from an empty batch\'s token gives the event it did not return')
})

t.test('the opening aggregate may answer an empty first batch although events wait, ' +
  'its token before them', async (t) => {
  const { client, dbName } = await standIn(t, {
    hazards: { seed: 3, maxReplyDelayMs: 0, majorityLagMs: 0, emptyBatches: 0.5, shortBatches: 0 }
  }, { maxPoolSize: 1 })
  const db = client.db(dbName())
  const from = (await db.command({ ping: 1 })).operationTime as Timestamp
  await db.collection<{ _id: number }>('coll').insertMany([{ _id: 1 }, { _id: 2 }])
  const firstBatches: Document[] = []
  const full = (): Document | undefined => firstBatches.find((reply) => reply.cursor.firstBatch.length === 2)
  const empty = (): Document | undefined => firstBatches.find((reply) => reply.cursor.firstBatch.length === 0)
  for (let i = 0; i < 40 && (full() === undefined || empty() === undefined); i++) {
    firstBatches.push(await db.command({
      aggregate: 'coll', pipeline: [{ $changeStream: { startAtOperationTime: from } }], cursor: {}
    }))
  }
  t.ok(full() !== undefined && empty() !== undefined,
    `of ${firstBatches.length} openings, one gave both events and one none`)
  t.ok(empty()?.cursor.postBatchResumeToken._data < tokenOf(full()?.cursor.firstBatch[0]),
    'the empty one\'s token is before the first event')
})

t.test('pre-images older than imagesKept writes are gone: null under whenAvailable, with the update\'s post-image; ' +
  'error 47 under required', async (t) => {
  const { client, dbName } = await standIn(t, {
    hazards: { seed: 1, imagesKept: 2, maxReplyDelayMs: 0, majorityLagMs: 0, emptyBatches: 0, shortBatches: 0 }
  })
  const db = client.db(dbName())
  const coll = db.collection<{ _id: number, v: number }>('coll')
  const from = (await db.command({ ping: 1 })).operationTime as Timestamp
  await coll.insertOne({ _id: 1, v: 0 })
  await coll.updateOne({ _id: 1 }, { $set: { v: 1 } })
  await coll.updateOne({ _id: 1 }, { $set: { v: 2 } })
  await coll.deleteOne({ _id: 1 })
  const stream = coll.watch([],
    { startAtOperationTime: from, fullDocument: 'whenAvailable', fullDocumentBeforeChange: 'whenAvailable' })
  t.teardown(async () => { await stream.close() })
  const [inserted, expired, kept, deleted] = await nextEvents(stream, 4)
  t.same(inserted?.fullDocument, { _id: 1, v: 0 }, 'an insert\'s document is no image: it stays')
  t.match(expired, { operationType: 'update', fullDocumentBeforeChange: null, fullDocument: null },
    'three writes old: no images')
  t.match(kept, { operationType: 'update', fullDocumentBeforeChange: { _id: 1, v: 1 }, fullDocument: { _id: 1, v: 2 } },
    'two writes old: kept')
  t.match(deleted, { operationType: 'delete', fullDocumentBeforeChange: { _id: 1, v: 2 } })

  const required = coll.watch([], { startAtOperationTime: from, fullDocumentBeforeChange: 'required' })
  t.teardown(async () => { await required.close() })
  t.match(await nextEvents(required, 2).catch((e: unknown) => e), { code: 47 }, 'NoMatchingDocument')
})

t.test('replies wait the seeded delays of their connection', async (t) => {
  const options = { seed: 11, maxReplyDelayMs: 40 }
  const server = await start({ hazards: options })
  t.teardown(server.close)
  const { socket, replyTo } = await rawConnection(t, server.port)
  const dice = new ConnectionHazards(hazardSettings(options), 1)
  const delays: number[] = []
  for (let id = 1; id <= 8; id++) {
    const delay = dice.replyDelay()
    delays.push(delay)
    const sent = Date.now()
    socket.write(opMsg(id, { ping: 1, $db: 'admin' }))
    const waited = (await replyTo(id)).at - sent
    t.ok(waited >= delay - 1, `ping ${id} answered after ${waited} ms, its delay ${delay} ms`)
  }
  t.ok(delays.reduce((sum, delay) => sum + delay, 0) >= 80, `delays worth waiting for: ${delays.join(', ')} ms`)
  const again = new ConnectionHazards(hazardSettings(options), 1)
  t.same(delays.map(() => again.replyDelay()), delays, 'the same seed, the same delays')
  const other = new ConnectionHazards(hazardSettings({ ...options, seed: 12 }), 1)
  t.notSame(delays.map(() => other.replyDelay()), delays, 'another seed, others')
  const batches = (seed: number): Array<number | undefined> => {
    const dice = new ConnectionHazards(hazardSettings({ seed }), 1)
    return Array.from({ length: 20 }, () => dice.batchCut())
  }
  t.same(batches(4), batches(4), 'batch cuts too are the seed\'s')
})

t.test('OFFLINE_MONGODB_HAZARDS is a seed or a JSON object; start() reads it unless told hazards: false', async (t) => {
  t.same(hazardsFromEnvironment({ OFFLINE_MONGODB_HAZARDS: '7' }), { seed: 7 })
  t.same(hazardsFromEnvironment({ OFFLINE_MONGODB_HAZARDS: '{"seed":7,"imagesKept":5}' }), { seed: 7, imagesKept: 5 })
  t.equal(hazardsFromEnvironment({}), undefined)
  t.equal(hazardsFromEnvironment({ OFFLINE_MONGODB_HAZARDS: '' }), undefined)
  t.throws(() => readHazards('soon'), /a seed \(an integer\) or a JSON object/)
  t.throws(() => readHazards('{"seed":1,"emptyBatches":0.8,"shortBatches":0.5}'), /emptyBatches and shortBatches/)
  t.throws(() => hazardSettings({ seed: 1, majorityLagMs: -1 }), /majorityLagMs/)

  const saved = process.env.OFFLINE_MONGODB_HAZARDS
  process.env.OFFLINE_MONGODB_HAZARDS = '3'
  // start() reads the variable before its first await: it is put back at once.
  const starting = [start(), start({ hazards: false })]
  if (saved === undefined) delete process.env.OFFLINE_MONGODB_HAZARDS
  else process.env.OFFLINE_MONGODB_HAZARDS = saved
  const [fromEnvironment, without] = await Promise.all(starting)
  t.teardown(async () => { await Promise.all([fromEnvironment?.close(), without?.close()]) })
  t.equal(fromEnvironment?.hazards?.settings.seed, 3)
  t.equal(without?.hazards, undefined)
})

t.test('npm run db -- --hazards <seed> starts the stand-in with hazards', async (t) => {
  const root = path.join(import.meta.dirname, '..', '..')
  const child = spawn(NODE, nodeArgs([
    '--import', 'tsx', '--allow-natives-syntax', 'offline-mongodb/cli.ts', '--port', '0', '--with-stdin',
    '--hazards', '{"seed":2,"majorityLagMs":"manual"}'
  ]), { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  const uri = await within(
    new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve)), 30_000, 'the URI')
  const client = await new MongoClient(uri, { serverSelectionTimeoutMS: 2000, writeConcern: { w: 1 } }).connect()
  t.teardown(async () => { await client.close() })
  await client.db('cli').collection<{ _id: number }>('coll').insertOne({ _id: 1 })
  const status = await client.db('admin').command({ offlineHazards: 'status' })
  t.ok((status.latestTime as Timestamp).toBigInt() > (status.majorityTime as Timestamp).toBigInt(),
    'the majority point is held, as asked')
})
