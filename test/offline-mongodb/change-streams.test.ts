// Change streams of the offline stand-in, through the official driver's watch(): the events and
// their shapes (manual: "Change Events"), the $changeStream options (manual: "$changeStream"),
// and the images (change-stream-resumes.test.ts has resuming and refusals). Cases ported from the
// driver specification's unified tests name their file and test (specifications repository,
// source/change-streams/tests/unified/).
import { MongoServerError, Timestamp, type Document } from 'mongodb'
import t from 'tap'
import { nextEvents, standIn, within } from './stand-in.js'

const SPEC = 'specifications: source/change-streams/tests/unified/'
const { client, dbName } = await standIn(t)
const watchOptions = { maxAwaitTimeMS: 200 }

t.test(`insert, update, replace and delete, in order and in their shapes (${SPEC}change-streams.yml ` +
  '"Test insert, update, replace, and delete event types")', async (t) => {
  const db = client.db(dbName())
  const collection = db.collection<{ _id: number, x: number }>('coll')
  const stream = collection.watch([], watchOptions)
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await collection.insertOne({ _id: 1, x: 1 })
  await collection.updateOne({ x: 1 }, { $set: { x: 2 } })
  await collection.replaceOne({ x: 2 }, { x: 3 })
  await collection.deleteOne({ x: 3 })
  const events = await nextEvents(stream, 4)
  const ns = { db: db.databaseName, coll: 'coll' }
  t.match(events[0], { operationType: 'insert', ns, documentKey: { _id: 1 }, fullDocument: { _id: 1, x: 1 } })
  t.match(events[1], {
    operationType: 'update',
    ns,
    documentKey: { _id: 1 },
    updateDescription: { updatedFields: { x: 2 }, removedFields: [], truncatedArrays: [] }
  })
  t.notOk('fullDocument' in (events[1] as Document), 'an update has no fullDocument by default')
  t.match(events[2], { operationType: 'replace', ns, documentKey: { _id: 1 }, fullDocument: { _id: 1, x: 3 } })
  t.match(events[3], { operationType: 'delete', ns, documentKey: { _id: 1 } })
  t.notOk('fullDocument' in (events[3] as Document))
  for (const event of events) {
    t.ok(event.clusterTime instanceof Timestamp, `${String(event.operationType)}: clusterTime is a Timestamp ` +
      '(change-streams-clusterTime.yml "clusterTime is present")')
    t.ok(event.wallTime instanceof Date, `${String(event.operationType)}: wallTime ` +
      '(change-streams.yml "Test wallTime field is set in a change event")')
    t.match(event._id, { _data: /^[0-9A-F]+$/ }, 'the resume token')
  }
  const tokens = events.map((e) => (e._id as { _data: string })._data)
  t.same([...tokens].sort(), tokens, 'tokens order as the events')
  const times = events.map((e) => (e.clusterTime as Timestamp).toBigInt())
  t.ok(times.every((time, i) => i === 0 || time > (times[i - 1] as bigint)), 'cluster times grow with each write')
})

t.test('the update description: set, removed, created and appended fields ' +
  '(manual: Change Events, "update")', async (t) => {
  const collection = client.db(dbName()).collection<{
    _id: number, a: number, b: { c: number }, tags: string[], gone?: boolean, n?: { m: number }
  }>('coll')
  await collection.insertOne({ _id: 1, a: 1, b: { c: 1 }, tags: ['x'], gone: true })
  const stream = collection.watch([], watchOptions)
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await collection.updateOne({ _id: 1 },
    { $set: { 'b.c': 2, 'n.m': 1 }, $inc: { a: 1 }, $push: { tags: 'y' }, $unset: { gone: '' } })
  await collection.updateOne({ _id: 1 }, { $set: { a: 2 } })
  await collection.updateOne({ _id: 1 }, { $set: { a: 3 } })
  const [changed, next] = await nextEvents(stream, 2)
  t.strictSame(changed?.updateDescription,
    { updatedFields: { a: 2, 'b.c': 2, n: { m: 1 }, 'tags.1': 'y' }, removedFields: ['gone'], truncatedArrays: [] })
  t.strictSame(next?.updateDescription.updatedFields, { a: 3 }, 'an update that changes nothing writes no event')
})

t.test(`a collection's stream sees its collection only (${SPEC}change-streams.yml "Executing a watch helper ` +
  'on a Collection results in notifications for changes to the specified collection")', async (t) => {
  const db0 = client.db(dbName())
  const db1 = client.db(dbName())
  const stream = db0.collection('collection0').watch([], watchOptions)
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await db0.collection('collection1').insertOne({ x: 1 })
  await db1.collection('collection0').insertOne({ y: 2 })
  await db0.collection('collection0').insertOne({ z: 3 })
  const [event] = await nextEvents(stream, 1)
  t.match(event, { operationType: 'insert', ns: { db: db0.databaseName, coll: 'collection0' }, fullDocument: { z: 3 } })
})

t.test(`a database's and the cluster's streams (${SPEC}change-streams.yml ` +
  '"Executing a watch helper on a Database…", "…on a MongoClient…")', async (t) => {
  const db0 = client.db(dbName())
  const db1 = client.db(dbName())
  const ofDatabase = db0.watch([], watchOptions)
  const ofCluster = client.watch([], watchOptions)
  t.teardown(async () => {
    await ofDatabase.close()
    await ofCluster.close()
  })
  await ofDatabase.tryNext()
  await ofCluster.tryNext()
  await db0.collection('collection1').insertOne({ x: 1 })
  await db1.collection('collection0').insertOne({ y: 2 })
  await db0.collection('collection0').insertOne({ z: 3 })
  await client.db('admin').collection('internal').insertOne({ ignored: true })
  const fromDatabase = await nextEvents(ofDatabase, 2)
  t.same(fromDatabase.map((e) => e.ns),
    [{ db: db0.databaseName, coll: 'collection1' }, { db: db0.databaseName, coll: 'collection0' }])
  const fromCluster = await nextEvents(ofCluster, 3)
  t.same(fromCluster.map((e) => e.fullDocument), [
    { _id: fromCluster[0]?.fullDocument._id, x: 1 },
    { _id: fromCluster[1]?.fullDocument._id, y: 2 },
    { _id: fromCluster[2]?.fullDocument._id, z: 3 }
  ])
  t.equal(await ofCluster.tryNext(), null, 'the admin database is not shown (change-streams spec, "MongoClient.watch")')
})

t.test('fullDocument: updateLookup gives the document as it is when the event is read, null once deleted ' +
  '(manual: $changeStream, fullDocument)', async (t) => {
  const collection = client.db(dbName()).collection<{ _id: number, v: number }>('coll')
  await collection.insertMany([{ _id: 1, v: 0 }, { _id: 2, v: 0 }])
  const stream = collection.watch([], { ...watchOptions, fullDocument: 'updateLookup' })
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await collection.updateOne({ _id: 1 }, { $set: { v: 1 } })
  const [first] = await nextEvents(stream, 1)
  t.strictSame(first?.fullDocument, { _id: 1, v: 1 })
  await collection.updateOne({ _id: 2 }, { $set: { v: 1 } })
  await collection.updateOne({ _id: 2 }, { $set: { v: 2 } })
  await collection.deleteOne({ _id: 1 })
  await collection.updateOne({ _id: 1 }, { $set: { v: 9 } }, { upsert: true })
  await collection.deleteOne({ _id: 1 })
  const events = await nextEvents(stream, 5)
  t.strictSame(events[0]?.fullDocument, { _id: 2, v: 2 }, 'the current document, not the one of that update')
  t.equal(events[3]?.operationType, 'insert')
  t.notOk('fullDocument' in (events[2] as Document), 'a delete has none')
})

t.test('point-in-time images: fullDocument whenAvailable/required and fullDocumentBeforeChange ' +
  `(${SPEC}change-streams-pre_and_post_images.yml)`, async (t) => {
  const db = client.db(dbName())
  const collection = db.collection<{ _id: number, x?: number }>('test')
  await collection.insertOne({ _id: 1 })
  const images = async (options: Document, enabled: boolean): Promise<Document> => {
    await db.command({ collMod: 'test', changeStreamPreAndPostImages: { enabled } })
    const stream = collection.watch([], { ...watchOptions, ...options })
    t.teardown(async () => { await stream.close() })
    await stream.tryNext()
    await collection.updateOne({ _id: 1 }, { $inc: { x: 1 } })
    return await within(stream.next(), 5000, 'an update event').catch((e: unknown) => ({ error: e }))
  }
  t.match(await images({ fullDocument: 'whenAvailable' }, true),
    { operationType: 'update', fullDocument: { _id: 1, x: 1 } },
    '"fullDocument:whenAvailable with changeStreamPreAndPostImages enabled"')
  t.match(await images({ fullDocument: 'whenAvailable' }, false),
    { operationType: 'update', fullDocument: null },
    '"fullDocument:whenAvailable with changeStreamPreAndPostImages disabled"')
  t.match(await images({ fullDocument: 'required' }, true),
    { fullDocument: { _id: 1, x: 3 } },
    '"fullDocument:required with changeStreamPreAndPostImages enabled"')
  t.equal(((await images({ fullDocument: 'required' }, false)).error as MongoServerError).code, 47,
    '"fullDocument:required with changeStreamPreAndPostImages disabled": NoMatchingDocument')
  t.match(await images({ fullDocumentBeforeChange: 'whenAvailable' }, true),
    { fullDocumentBeforeChange: { _id: 1, x: 4 } },
    '"fullDocumentBeforeChange:whenAvailable with changeStreamPreAndPostImages enabled"')
  t.match(await images({ fullDocumentBeforeChange: 'whenAvailable' }, false),
    { fullDocumentBeforeChange: null },
    '"fullDocumentBeforeChange:whenAvailable with changeStreamPreAndPostImages disabled"')
  t.match(await images({ fullDocumentBeforeChange: 'required' }, true),
    { fullDocumentBeforeChange: { _id: 1, x: 6 } },
    '"fullDocumentBeforeChange:required with changeStreamPreAndPostImages enabled"')
  t.equal(((await images({ fullDocumentBeforeChange: 'required' }, false)).error as MongoServerError).code, 47,
    '"fullDocumentBeforeChange:required with changeStreamPreAndPostImages disabled"')
})

t.test('fullDocumentBeforeChange: required gives the document before each update, replace and delete ' +
  '(manual: Change Events)', async (t) => {
  const collection = client.db(dbName()).collection<{ _id: number, v?: number, w?: number }>('coll')
  await collection.insertOne({ _id: 1, v: 1 })
  const stream = collection.watch([], { ...watchOptions, fullDocumentBeforeChange: 'required' })
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await collection.insertOne({ _id: 2 })
  await collection.updateOne({ _id: 1 }, { $set: { v: 2 } })
  await collection.replaceOne({ _id: 1 }, { w: 1 })
  await collection.deleteOne({ _id: 1 })
  const events = await nextEvents(stream, 4)
  t.notOk('fullDocumentBeforeChange' in (events[0] as Document), 'an insert has no pre-image')
  t.same(events.slice(1).map((e) => e.fullDocumentBeforeChange), [{ _id: 1, v: 1 }, { _id: 1, v: 2 }, { _id: 1, w: 1 }])
})
