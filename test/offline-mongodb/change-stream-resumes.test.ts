// Change streams of the offline stand-in, through the official driver's watch(): resuming and
// starting points (change-streams spec, "Resume Process"), pipelines on events, drop and
// invalidate, and mongod's refusals. Cases ported from the driver specification's unified tests
// name their file and test (specifications repository, source/change-streams/tests/unified/).
import {
  MongoServerError,
  Timestamp,
  type ChangeStreamDocument,
  type Document,
  type MongoError,
  type ResumeToken
} from 'mongodb'
import t from 'tap'
import { startFaultProxy, type ErrorReply } from '../faults/fault-proxy.js'
import { nextEvents, standIn, within } from './stand-in.js'

const SPEC = 'specifications: source/change-streams/tests/unified/'
const { client, dbName } = await standIn(t)
const watchOptions = { maxAwaitTimeMS: 200 }
const codeOf = async (run: Promise<unknown>): Promise<number | undefined> =>
  ((await run.then(() => undefined, (e: unknown) => e)) as MongoError | undefined)?.code as number | undefined

t.test('resumeAfter and startAfter a saved token give exactly the events after it ' +
  '(manual: Change Streams, "Resume a Change Stream")', async (t) => {
  const collection = client.db(dbName()).collection<{ _id: number }>('coll')
  const stream = collection.watch([], watchOptions)
  await stream.tryNext()
  await collection.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }, { _id: 4 }])
  const events = await nextEvents(stream, 2)
  const saved = events[1]?._id as ResumeToken
  await stream.close()
  for (const option of ['resumeAfter', 'startAfter'] as const) {
    const resumed = collection.watch([], { ...watchOptions, [option]: saved })
    t.teardown(async () => { await resumed.close() })
    const after = await nextEvents(resumed, 2)
    t.same(after.map((e) => e.documentKey), [{ _id: 3 }, { _id: 4 }], option)
    t.equal(await resumed.tryNext(), null, `${option}: nothing more`)
  }
})

t.test('startAtOperationTime starts at the write of that cluster time ' +
  '(manual: $changeStream, startAtOperationTime)', async (t) => {
  const collection = client.db(dbName()).collection<{ _id: number }>('coll')
  const stream = collection.watch([], watchOptions)
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await collection.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }])
  const events = await nextEvents(stream, 3)
  const at = collection.watch([], { ...watchOptions, startAtOperationTime: events[1]?.clusterTime as Timestamp })
  t.teardown(async () => { await at.close() })
  t.same((await nextEvents(at, 2)).map((e) => e.documentKey), [{ _id: 2 }, { _id: 3 }])
})

t.test(`$match on operationType and on fullDocument fields (${SPEC}change-streams.yml ` +
  '"Change Stream should allow valid aggregate pipeline stages")', async (t) => {
  const collection = client.db(dbName()).collection<{ _id: number, y?: number, z?: number }>('collection0')
  const byField = collection.watch([{ $match: { 'fullDocument.z': 3 } }], watchOptions)
  const byType = collection.watch([{ $match: { operationType: { $in: ['delete', 'replace'] } } }], watchOptions)
  t.teardown(async () => {
    await byField.close()
    await byType.close()
  })
  await byField.tryNext()
  await byType.tryNext()
  await collection.insertOne({ _id: 1, y: 2 })
  await collection.insertOne({ _id: 2, z: 3 })
  await collection.replaceOne({ _id: 1 }, { z: 4 })
  await collection.deleteOne({ _id: 2 })
  t.match(await nextEvents(byField, 1), [{ operationType: 'insert', fullDocument: { _id: 2, z: 3 } }])
  t.same((await nextEvents(byType, 2)).map((e) => e.operationType), ['replace', 'delete'])
})

t.test(`$project on events (${SPEC}change-streams.yml "Test projection in change stream returns expected fields", ` +
  '"Test server error on projecting out _id")', async (t) => {
  const db = client.db(dbName())
  const collection = db.collection<{ _id: number, a: number }>('collection0')
  const projected = collection.watch([{ $project: { optype: '$operationType', ns: 1, newField: 'value' } }],
    watchOptions)
  const withoutId = collection.watch([{ $project: { _id: 0 } }], watchOptions)
  t.teardown(async () => {
    await projected.close()
    await withoutId.close()
  })
  await projected.tryNext()
  await withoutId.tryNext()
  await collection.insertOne({ _id: 1, a: 1 })
  const [event] = await nextEvents(projected, 1)
  t.strictSame({ ...event, _id: undefined },
    { _id: undefined, optype: 'insert', ns: { db: db.databaseName, coll: 'collection0' }, newField: 'value' })
  const error = await within(withoutId.next(), 5000, 'the refusal').catch((e: unknown) => e) as MongoServerError
  t.equal(error.code, 280, 'ChangeStreamFatalError')
  t.ok(error.hasErrorLabel('NonResumableChangeStreamError'))
})

t.test(`drop and invalidate events (${SPEC}change-streams.yml "Test drop and invalidate event types")`, async (t) => {
  const db = client.db(dbName())
  const collection = db.collection<{ _id: number }>('collection0')
  await collection.insertOne({ _id: 1 })
  const stream = collection.watch([], watchOptions)
  const ofDatabase = db.watch([], watchOptions)
  t.teardown(async () => {
    await stream.close()
    await ofDatabase.close()
  })
  await stream.tryNext()
  await ofDatabase.tryNext()
  await collection.drop()
  const [dropped, invalidated] = await nextEvents(stream, 2)
  t.match(dropped, { operationType: 'drop', ns: { db: db.databaseName, coll: 'collection0' } })
  t.match(invalidated, { operationType: 'invalidate' })
  t.notOk('ns' in (invalidated as Document), 'an invalidate has no namespace')
  t.equal(await within(stream.tryNext(), 5000, 'the end'), null)
  t.ok(stream.closed, 'the stream is closed after an invalidate (the server closed its cursor)')

  // startAfter an invalidate opens a stream on the new collection of that name (manual: Change Streams, "startAfter").
  const after = collection.watch([], { ...watchOptions, startAfter: invalidated?._id as ResumeToken })
  t.teardown(async () => { await after.close() })
  await collection.insertOne({ _id: 2 })
  t.match(await nextEvents(after, 1), [{ operationType: 'insert', documentKey: { _id: 2 } }])
  const refused = collection.watch([], { ...watchOptions, resumeAfter: invalidated?._id as ResumeToken })
  t.equal(await codeOf(refused.tryNext()), 260, 'resumeAfter an invalidate: InvalidResumeToken')

  await db.dropDatabase()
  const events = await nextEvents(ofDatabase, 4)
  t.same(events.map((e) => e.operationType), ['drop', 'insert', 'drop', 'dropDatabase'],
    'a database stream sees each drop, then the dropDatabase')
  t.match(events[3], { operationType: 'dropDatabase', ns: { db: db.databaseName } })
  t.match(await nextEvents(ofDatabase, 1), [{ operationType: 'invalidate' }],
    'a database stream is invalidated by dropDatabase')
})

t.test('resumable errors: the driver resumes from its cached token, and sees every event once ' +
  `(${SPEC}change-streams-resume-allowlist.yml "change stream resumes after CursorNotFound"; ` +
  'change-streams-resume-errorLabels.yml)', async (t) => {
  const { server } = await standIn(t)
  const proxy = await startFaultProxy({ host: '127.0.0.1', port: server.port })
  t.teardown(proxy.close)
  const { MongoClient } = await import('mongodb')
  const proxied = await new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 2000 }).connect()
  t.teardown(async () => { await proxied.close() })
  const collection = proxied.db('resume').collection('collection0')
  const cases: Array<[name: string, reply: ErrorReply, resumes: boolean]> = [
    ['CursorNotFound', { code: 43, codeName: 'CursorNotFound', errmsg: 'cursor id 1 not found' }, true],
    ['"change stream resumes if error contains ResumableChangeStreamError"', {
      code: 50,
      codeName: 'MaxTimeMSExpired',
      errmsg: 'operation exceeded time limit',
      errorLabels: ['ResumableChangeStreamError']
    }, true],
    ['"change stream does not resume if error does not contain ResumableChangeStreamError"',
      { code: 6, codeName: 'HostUnreachable', errmsg: 'host unreachable' }, false]
  ]
  for (const [name, reply, resumes] of cases) {
    const stream = collection.watch([], watchOptions)
    t.teardown(async () => { await stream.close() })
    await stream.tryNext()
    await collection.insertOne({ x: name })
    proxy.failCommands(['getMore'], reply, 1)
    const outcome = await within(stream.next(), 5000, name).catch((e: unknown) => e)
    if (resumes) t.match(outcome, { operationType: 'insert', fullDocument: { x: name } }, `${name}: resumed`)
    else t.equal((outcome as MongoServerError).code, 6, `${name}: the error`)
    proxy.heal()
  }
})

t.test('refusals carry mongod codes ' +
  '(manual: $changeStream; document_source_change_stream.cpp; resume_token.cpp)', async (t) => {
  const db = client.db(dbName())
  const collection = db.collection('coll')
  const opened = async (pipeline: Document[], options: Document = {}): Promise<number | undefined> => {
    const stream = collection.watch(pipeline, { ...watchOptions, ...options })
    try {
      return await codeOf(stream.tryNext())
    } finally {
      await stream.close()
    }
  }
  t.equal(await opened([], { resumeAfter: { _data: 'zz' } }), 9, 'a token that is not hex: FailedToParse')
  t.equal(await opened([], { resumeAfter: { _data: 5 } }), 40647, '_data not a string')
  t.equal(await opened([], { resumeAfter: { _data: '' } }), 40649, 'an empty token')
  t.equal(await opened([], { resumeAfter: { _data: '82000000010000000101' } }), 286,
    'a token from before the server started: ChangeStreamHistoryLost')
  const stream = collection.watch([], watchOptions)
  await stream.tryNext()
  const token = stream.resumeToken
  await stream.close()
  t.equal(await opened([], { resumeAfter: token, startAfter: token }), 50865, 'resumeAfter and startAfter')
  t.equal(await opened([], { resumeAfter: token, startAtOperationTime: new Timestamp({ t: 1, i: 1 }) }), 40674,
    'a token and startAtOperationTime')
  t.equal(await opened([], { fullDocument: 'bogus' }), 2, 'an unknown fullDocument: BadValue')
  t.equal(await opened([], { showExpandedEvents: true }), 2, 'showExpandedEvents is refused')
  t.equal(await opened([{ $unsupported: 'foo' }]), 40324, `an unknown stage (${SPEC}change-streams-errors.yml ` +
    '"Change Stream should error when an invalid aggregation stage is passed in")')
  t.equal(await opened([{ $sort: { _id: 1 } }]), 20, 'a stage not allowed in a change stream: IllegalOperation')
  t.equal(await codeOf(db.aggregate([{ $match: {} }, { $changeStream: {} }]).toArray()), 40602,
    '$changeStream after another stage')
  t.equal(await codeOf(client.db('admin').collection('x').watch([], watchOptions).tryNext()), 73,
    'a collection of the admin database')
  t.equal(await codeOf(db.aggregate([{ $changeStream: { allChangesForCluster: true } }]).toArray()), 72,
    'allChangesForCluster outside admin: InvalidOptions')
})

t.test('the events of a stream that is not read wait for it (manual: Change Streams, "Availability")', async (t) => {
  const collection = client.db(dbName()).collection<{ _id: number }>('coll')
  const stream = collection.watch([], { ...watchOptions, batchSize: 2 })
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await collection.insertMany(Array.from({ length: 7 }, (_, i) => ({ _id: i })))
  const events: Array<ChangeStreamDocument<Document>> =
    await nextEvents(stream, 7) as Array<ChangeStreamDocument<Document>>
  t.same(events.map((e) => 'documentKey' in e ? e.documentKey._id : undefined), [0, 1, 2, 3, 4, 5, 6],
    'in batches of 2, in order')
})
