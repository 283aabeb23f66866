// How the stand-in's change stream cursors wait and end: a getMore waits for a write at most
// maxTimeMS (the driver's maxAwaitTimeMS) and then answers an empty batch whose
// postBatchResumeToken has moved on; killCursors, a client that goes away and the server closing
// each end a waiting getMore at once; a connection's commands are answered in order; history
// older than the oplog is lost (ChangeStreamHistoryLost). And the handshake of the one-member
// replica set the stand-in presents, which the driver keeps to through a TCP forwarder.
// A getMore's wait runs on the test's clock (testClock()): the test ends it, or shows what else did.
import {
  Long,
  MongoClient,
  MongoServerError,
  Timestamp,
  type ResumeToken,
  type ServerDescriptionChangedEvent
} from 'mongodb'
import t, { type Test } from 'tap'
import { start } from '../../offline-mongodb/server.js'
import { startFaultProxy } from '../faults/fault-proxy.js'
import {
  nextEvents,
  opMsg,
  rawConnection,
  standIn,
  testClock,
  watchSettled,
  within,
  type ClockWait
} from './stand-in.js'

/**
 * A getMore's wait, taken from the stand-in's clock, still unanswered after a round trip of
 * another connection (the server went on to other work); then fired: the answer it gave then.
 */
async function answerAfterWait<T> (
  t: Test, client: MongoClient, wait: ClockWait, answer: Promise<T>, what: string
): Promise<T> {
  const settled = watchSettled(answer)
  await client.db('admin').command({ ping: 1 })
  t.notOk(settled(), `${what}: no answer while its time runs`)
  wait.fire()
  return await within(answer, 5000, what)
}

const codeOf = async (run: Promise<unknown>): Promise<number | string | undefined> =>
  ((await run.then(() => undefined, (e: unknown) => e)) as MongoServerError | undefined)?.code

t.test('hello presents the primary of a one-member replica set; replies carry operationTime and $clusterTime ' +
  '(manual: hello; "Causal Consistency")', async (t) => {
  const { server, client } = await standIn(t, { replicaSet: 'rs0' })
  const me = `127.0.0.1:${server.port}`
  const hello = await client.db('admin').command({ hello: 1 })
  t.match(hello, {
    isWritablePrimary: true, secondary: false, setName: 'rs0', hosts: [me], primary: me, me, maxWireVersion: 21
  })
  const before = await client.db('admin').command({ ping: 1 })
  await client.db('x').collection('y').insertOne({})
  const after = await client.db('admin').command({ ping: 1 })
  t.ok(before.operationTime instanceof Timestamp && after.operationTime instanceof Timestamp)
  t.ok(after.operationTime.toBigInt() > before.operationTime.toBigInt(), 'a write moves the cluster time on')
  t.equal(after.$clusterTime.clusterTime.toBigInt(), after.operationTime.toBigInt())
  t.equal(after.$clusterTime.signature.hash.length(), 20, 'a signature of 20 zero bytes')
})

t.test('through a TCP forwarder on another port, with directConnection=true, the driver keeps to the address ' +
  'it was given', async (t) => {
  const { server, client } = await standIn(t)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: server.port })
  t.teardown(proxy.close)
  const proxied = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 2000 })
  const seen: ServerDescriptionChangedEvent[] = []
  proxied.on('serverDescriptionChanged', (event) => seen.push(event))
  await proxied.connect()
  t.teardown(async () => { await proxied.close() })
  const collection = proxied.db('forwarded').collection('coll')
  const stream = collection.watch([], { maxAwaitTimeMS: 200 })
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await client.db('forwarded').collection<{ _id: number }>('coll').insertOne({ _id: 1 })
  t.match(await nextEvents(stream, 1), [{ operationType: 'insert', documentKey: { _id: 1 } }],
    'watch() works through the forwarder')
  t.ok(seen.length > 0)
  t.same([...new Set(seen.map((e) => e.address))], [`127.0.0.1:${proxy.port}`],
    'only the forwarder was ever contacted, not the advertised host')
  t.equal(seen[seen.length - 1]?.newDescription.type, 'RSPrimary', 'a replica set primary')
  t.ok(proxy.accepted() >= 1)
})

t.test('an empty getMore answers when maxAwaitTimeMS has run out, with a token that moved on past writes ' +
  'elsewhere (change-streams spec, "Exposing All Resume Tokens")', async (t) => {
  const clock = testClock()
  const { client } = await standIn(t, { clock })
  const db = client.db('tokens')
  const stream = db.collection('watched').watch([{ $match: { operationType: 'delete' } }], { maxAwaitTimeMS: 300 })
  t.teardown(async () => { await stream.close() })
  /** A tryNext() whose getMore finds nothing: it waits maxAwaitTimeMS, and answers when that has run out. */
  const emptyNext = async (what: string, meanwhile = async () => {}): Promise<unknown> => {
    const next = stream.tryNext()
    const wait = await clock.next(what)
    t.equal(wait.ms, 300, `${what}: the getMore waits maxAwaitTimeMS (its maxTimeMS)`)
    await meanwhile()
    return await answerAfterWait(t, client, wait, next, what)
  }
  t.equal(await emptyNext('the first getMore'), null)
  const first = stream.resumeToken as { _data: string }
  t.equal(await emptyNext('a getMore with nothing written'), null)
  t.same(stream.resumeToken, first, 'nothing written: the token stays')
  // Written while it waits, and not shown by it: the wait goes on (manual: getMore, maxTimeMS of an awaitData cursor).
  t.equal(await emptyNext('a getMore during writes it does not show', async () => {
    await db.collection('elsewhere').insertOne({})
    await db.collection('watched').insertOne({}) // not a delete: filtered out
  }), null)
  const moved = stream.resumeToken as { _data: string }
  t.ok(moved._data > first._data, `the token moved on (${first._data} → ${moved._data})`)
  const resumed = db.collection('watched').watch([], { maxAwaitTimeMS: 200, resumeAfter: moved as ResumeToken })
  t.teardown(async () => { await resumed.close() })
  await db.collection<{ _id: string }>('watched').insertOne({ _id: 'next' })
  t.match(await nextEvents(resumed, 1), [{ documentKey: { _id: 'next' } }], 'resuming from it gives what came after')
})

t.test('a waiting getMore wakes at the first write, and waits 1 s without maxTimeMS ' +
  '(manual: getMore, "Tailable cursors")', async (t) => {
  const clock = testClock()
  const { client } = await standIn(t, { clock })
  const db = client.db('wakes')
  const opened = await db.command({ aggregate: 'coll', pipeline: [{ $changeStream: {} }], cursor: {} },
    { promoteLongs: false })
  const id = opened.cursor.id as Long
  const waiting = db.command({ getMore: id, collection: 'coll', maxTimeMS: 10_000 })
  const wait = await clock.next('the getMore\'s wait')
  t.equal(wait.ms, 10_000, 'it waits maxTimeMS')
  await db.collection<{ _id: number }>('coll').insertOne({ _id: 1 })
  const woken = await within(waiting, 5000, 'the getMore')
  t.match(woken.cursor.nextBatch, [{ operationType: 'insert', documentKey: { _id: 1 } }])
  t.equal(await within(wait.ended, 5000, 'the end of its wait'), 'cancelled',
    'answered at the write, its time never run out')
  const plain = db.command({ getMore: id, collection: 'coll' })
  const defaultWait = await clock.next('the default wait')
  t.equal(defaultWait.ms, 1000, 'without maxTimeMS, a wait of 1 s')
  const empty = await answerAfterWait(t, client, defaultWait, plain, 'the default wait')
  t.same(empty.cursor.nextBatch, [])
  t.ok(empty.cursor.postBatchResumeToken._data > (woken.cursor.postBatchResumeToken._data as string) ||
    empty.cursor.postBatchResumeToken._data === woken.cursor.postBatchResumeToken._data)
})

t.test('killCursors, close(), a client that goes away and the server closing each end a waiting getMore ' +
  'at once', async (t) => {
  const clock = testClock()
  const { server, client } = await standIn(t, { clock })
  const db = client.db('ends')
  const open = async (): Promise<Long> => (await db.command(
    { aggregate: 'coll', pipeline: [{ $changeStream: {} }], cursor: {} }, { promoteLongs: false }
  )).cursor.id
  // The clock never moves: a wait that ends was ended by what the test did, its time never run out.
  const cancelled = async (wait: ClockWait, what: string): Promise<void> => {
    t.equal(await within(wait.ended, 5000, what), 'cancelled', `${what}: ended at once, not after maxTimeMS`)
  }

  const killed = await open()
  const waiting = db.command({ getMore: killed, collection: 'coll', maxTimeMS: 30_000 })
  const killedWait = await clock.next('the getMore to kill')
  const other = await new MongoClient(server.uri).connect()
  t.teardown(async () => { await other.close() })
  t.match(await other.db('ends').command({ killCursors: 'coll', cursors: [killed] }),
    { cursorsKilled: [killed.toNumber()] })
  t.equal(await codeOf(within(waiting, 5000, 'the killed getMore')), 237, 'CursorKilled')
  await cancelled(killedWait, 'killCursors')

  const stream = db.collection('coll').watch([], { maxAwaitTimeMS: 30_000 })
  // Its aggregate, then a getMore that waits.
  const next = stream.next().then(() => 'event', () => 'ended')
  const streamWait = await clock.next('the stream\'s getMore')
  await within(stream.close(), 5000, 'close()')
  await cancelled(streamWait, 'close()')
  await within(next, 5000, 'the pending next()')

  // A client whose connection breaks: its waiting getMore ends and the cursor is gone (CursorNotFound after).
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: server.port })
  t.teardown(proxy.close)
  const leaving = await new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 1000 }).connect()
  t.teardown(async () => { await leaving.close().catch(() => {}) })
  const abandoned = await open()
  const gone = leaving.db('ends').command({ getMore: abandoned, collection: 'coll', maxTimeMS: 30_000 })
    .catch(() => 'broken')
  const goneWait = await clock.next('the getMore of the client that goes away')
  proxy.outage()
  t.equal(await within(gone, 5000, 'the broken getMore'), 'broken')
  // The server has seen the connection close once it ends the wait (the cursor goes in that turn).
  await cancelled(goneWait, 'the client going away')
  t.equal(await codeOf(db.command({ getMore: abandoned, collection: 'coll', maxTimeMS: 0 })), 43,
    'the cursor went with its client')

  // The server closing: close() does not wait for maxTimeMS.
  const lone = await start({ clock })
  const loneClient = await new MongoClient(lone.uri, { serverSelectionTimeoutMS: 1000 }).connect()
  t.teardown(async () => { await loneClient.close().catch(() => {}) })
  const id = (await loneClient.db('x').command(
    { aggregate: 'c', pipeline: [{ $changeStream: {} }], cursor: {} }, { promoteLongs: false }
  )).cursor.id
  const pending = loneClient.db('x').command({ getMore: id, collection: 'c', maxTimeMS: 30_000 }).catch(() => 'ended')
  const loneWait = await clock.next('the getMore of the server that closes')
  await within(lone.close(), 5000, 'the server close()')
  await cancelled(loneWait, 'the server closing')
  t.equal(await within(pending, 5000, 'the getMore of a closed server'), 'ended')
})

t.test('the commands of one connection are answered one at a time, in order, while a getMore waits', async (t) => {
  const clock = testClock()
  const { server, client } = await standIn(t, { clock })
  const { socket, replies, replyTo } = await rawConnection(t, server.port)
  socket.write(opMsg(1, { aggregate: 'coll', pipeline: [{ $changeStream: {} }], cursor: {}, $db: 'ordered' }))
  const cursorId = (await replyTo(1)).body.cursor.id as Long
  socket.write(Buffer.concat([
    opMsg(2, { getMore: cursorId, collection: 'coll', maxTimeMS: 300, $db: 'ordered' }),
    opMsg(3, { ping: 1, $db: 'admin' })
  ]))
  const wait = await clock.next('the getMore\'s wait')
  // Another connection's round trip: the server has had its chance to answer the ping.
  await client.db('admin').command({ ping: 1 })
  t.same(replies.slice(1), [], 'the ping waits while the getMore does')
  wait.fire()
  const getMore = await replyTo(2)
  await replyTo(3)
  t.same(replies.slice(1).map((r) => r.responseTo), [2, 3], 'the getMore is answered first, then the ping')
  t.same(getMore.body.cursor.nextBatch, [])
})

t.test('history older than the oplog is lost: ChangeStreamHistoryLost ' +
  '(manual: Change Streams, "Resume a Change Stream"; error 286)', async (t) => {
  const { client } = await standIn(t, { oplogEntries: 20 })
  const collection = client.db('lost').collection<{ _id: string | number }>('coll')
  const behind = collection.watch([], { maxAwaitTimeMS: 100, batchSize: 1 })
  t.teardown(async () => { await behind.close() })
  await behind.tryNext()
  await collection.insertOne({ _id: 'first' })
  const [first] = await nextEvents(behind, 1)
  const token = first?._id as ResumeToken
  const time = first?.clusterTime as Timestamp
  const early = collection.watch([], { resumeAfter: token, maxAwaitTimeMS: 100 })
  t.equal(await within(early.tryNext(), 5000, 'an early resume'), null, 'still in the oplog: resumable')
  await early.close()
  await collection.insertMany(Array.from({ length: 25 }, (_, i) => ({ _id: i })))
  for (const [name, options] of [
    ['resumeAfter', { resumeAfter: token }],
    ['startAfter', { startAfter: token }],
    ['startAtOperationTime', { startAtOperationTime: time }]
  ] as const) {
    const stream = collection.watch([], { maxAwaitTimeMS: 100, ...options })
    const error = await within(stream.tryNext(), 5000, name).catch((e: unknown) => e) as MongoServerError
    t.equal(error.code, 286, `${name} a dropped write: ChangeStreamHistoryLost`)
    await stream.close()
  }
  const lost = await within(behind.next(), 5000, 'the stream that fell behind')
    .catch((e: unknown) => e) as MongoServerError
  t.equal(lost.code, 286, 'a stream that fell behind the oplog: the getMore fails with ChangeStreamHistoryLost')
  t.ok(lost.hasErrorLabel('NonResumableChangeStreamError'), 'and the driver does not resume it')
  const fresh = collection.watch([], { maxAwaitTimeMS: 100 })
  t.teardown(async () => { await fresh.close() })
  await fresh.tryNext()
  await collection.insertOne({ _id: 'after' })
  t.match(await nextEvents(fresh, 1), [{ documentKey: { _id: 'after' } }], 'a new stream starts now, whatever was lost')
})

t.test('a getMore of another cursor id, or with the wrong collection, is CursorNotFound ' +
  '(manual: getMore)', async (t) => {
  const { client } = await standIn(t)
  const db = client.db('ids')
  const opened = await db.command({ aggregate: 'coll', pipeline: [{ $changeStream: {} }], cursor: {} },
    { promoteLongs: false })
  t.match(opened.cursor, { ns: 'ids.coll', firstBatch: [], postBatchResumeToken: { _data: /^82/ } })
  t.equal(await codeOf(db.command({ getMore: opened.cursor.id, collection: 'other', maxTimeMS: 10 })), 43)
  t.equal(await codeOf(db.command({ getMore: Long.fromNumber(12345), collection: 'coll', maxTimeMS: 10 })), 43)
  const ofDatabase = await db.command({ aggregate: 1, pipeline: [{ $changeStream: {} }], cursor: {} },
    { promoteLongs: false })
  t.equal(ofDatabase.cursor.ns, 'ids.$cmd.aggregate', 'a database stream names the collectionless namespace')
  t.match(await db.command({ getMore: ofDatabase.cursor.id, collection: '$cmd.aggregate', maxTimeMS: 10 }),
    { cursor: { nextBatch: [] } })
})
