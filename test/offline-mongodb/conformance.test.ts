import { MongoServerError, ObjectId, type CommandStartedEvent, type Document } from 'mongodb'
import t from 'tap'
import { clientOfTestDatabase, testDatabase } from '../helpers/database.js'
import { MISSING, cases } from './conformance-cases.js'
import { refusedUpdates, updateCases } from './update-cases.js'

const { client, db } = await clientOfTestDatabase('conformance', { monitorCommands: true })

/**
 * A document of the update cases (update-cases.ts): a numeric `_id`, optional here because
 * the cases type their documents as plain `Document`s.
 */
interface CaseDocument { _id?: number }

const documentsOf = (values: unknown[]): Document[] =>
  values.map((v, _id) => v === MISSING ? { _id } : { _id, v })

for (const [index, c] of cases.entries()) {
  t.test(`${c.name} (${c.manual})`, async (t) => {
    const collection = db.collection(`case_${index}`)
    await collection.insertMany(c.docs ?? documentsOf(c.values ?? []))
    // The cases' documents have numeric `_id`s, and the projection keeps only those.
    const found = await collection.find<{ _id: number }>(c.filter ?? {}, { projection: { _id: 1 }, ...(c.collation === undefined ? {} : { collation: c.collation }) }).sort(c.sort ?? {}).toArray()
    const ids = found.map((doc) => doc._id)
    if (c.sort === undefined) t.same(ids.sort((a, b) => a - b), c.expect)
    else t.same(ids, c.expect)
  })
}

t.test('pagination', async (t) => {
  const collection = db.collection<{ _id: number, n: number }>('pages')
  await collection.insertMany(Array.from({ length: 250 }, (_, i) => ({ _id: i, n: i % 7 })))

  t.test('skip and limit take the documented slice of the sorted sequence (cursor.skip/limit pages)', async (t) => {
    const page = await collection.find({}).sort({ n: 1, _id: 1 }).skip(20).limit(10).toArray()
    const all = await collection.find({}).sort({ n: 1, _id: 1 }).toArray()
    t.same(page.map((d) => d._id), all.slice(20, 30).map((d) => d._id))
  })

  t.test('a cursor walks every document across getMore batches (manual: getMore)', async (t) => {
    const getMores: CommandStartedEvent[] = []
    const listener = (event: CommandStartedEvent): void => { if (event.commandName === 'getMore') getMores.push(event) }
    client.on('commandStarted', listener)
    t.teardown(() => { client.off('commandStarted', listener) })
    const ids = (await collection.find({}, { batchSize: 7 }).sort({ _id: 1 }).toArray()).map((d) => d._id)
    t.same(ids, Array.from({ length: 250 }, (_, i) => i))
    t.equal(getMores.length, Math.ceil((250 - 7) / 7), 'one getMore per further batch of 7')
  })

  t.test('singleBatch closes the cursor after its first batch of batchSize documents (manual: find)', async (t) => {
    const reply = await db.command({ find: 'pages', filter: {}, sort: { _id: 1 }, batchSize: 3, singleBatch: true }, { promoteLongs: false })
    t.same(reply.cursor.firstBatch.map((d: Document) => d._id), [0, 1, 2])
    t.ok(reply.cursor.id.isZero(), 'closed')
  })

  t.test('closing a cursor early kills it on the server (manual: killCursors)', async (t) => {
    const cursor = collection.find({}, { batchSize: 5 })
    await cursor.next()
    const id = cursor.id
    t.ok(id !== undefined && !id.isZero(), 'the cursor is open on the server')
    await cursor.close()
    const error = await db.command({ getMore: id, collection: 'pages' }).catch((e: unknown) => e)
    t.ok(error instanceof MongoServerError)
    t.equal((error as MongoServerError).code, 43, 'CursorNotFound')
  })

  t.test('countDocuments honours filter, skip and limit (manual: db.collection.countDocuments)', async (t) => {
    t.equal(await collection.countDocuments({ n: 0 }), 36)
    t.equal(await collection.countDocuments({ n: 0 }, { skip: 30 }), 6)
    t.equal(await collection.countDocuments({ n: { $gte: 1 } }, { limit: 10 }), 10)
    t.equal(await collection.countDocuments({ n: 99 }), 0)
  })

  t.test('the count command (manual: count)', async (t) => {
    t.equal(await collection.estimatedDocumentCount(), 250)
    const reply = await db.command({ count: 'pages', query: { n: 3 } })
    t.equal(reply.n, 36)
  })
})

t.test('a batch is the lesser of batchSize documents or 16 MiB of them (manual: cursor.batchSize)', async (t) => {
  const collection = db.collection<{ _id: number, text: string }>('big')
  const text = 'x'.repeat(6 * 1024 * 1024)
  await collection.insertMany(Array.from({ length: 5 }, (_, i) => ({ _id: i, text })))
  const first = await db.command({ find: 'big', filter: {}, sort: { _id: 1 }, batchSize: 10, projection: { _id: 1, text: 1 } }, { promoteLongs: false })
  t.same(first.cursor.firstBatch.map((d: Document) => d._id), [0, 1], 'two 6 MiB documents; a third would pass 16 MiB')
  t.notOk(first.cursor.id.isZero(), 'the rest stays open')
  const next = await db.command({ getMore: first.cursor.id, collection: 'big' }, { promoteLongs: false })
  t.same(next.cursor.nextBatch.map((d: Document) => d._id), [2, 3], 'getMore batches are capped too')
  const last = await db.command({ getMore: first.cursor.id, collection: 'big' }, { promoteLongs: false })
  t.same(last.cursor.nextBatch.map((d: Document) => d._id), [4])
  t.ok(last.cursor.id.isZero())
})

t.test('projection keeps only the named fields, with _id unless excluded (manual: Project Fields to Return)', async (t) => {
  const collection = db.collection<{ _id: number, name: string, secret: string, nested: { keep: number, drop: number }, list: Array<{ keep: number, drop: number }> }>('projection')
  await collection.insertOne({ _id: 1, name: 'a', secret: 'x', nested: { keep: 1, drop: 2 }, list: [{ keep: 1, drop: 2 }] })
  t.same(await collection.findOne({}, { projection: { name: 1, 'nested.keep': 1, 'list.keep': 1 } }), { _id: 1, name: 'a', nested: { keep: 1 }, list: [{ keep: 1 }] })
  t.same(await collection.findOne({}, { projection: { _id: 0, name: 1 } }), { name: 'a' })
  t.same(await collection.findOne({}, { projection: { secret: 0, nested: 0, list: 0 } }), { _id: 1, name: 'a' })
})

t.test('unique indexes reject duplicates with E11000 (manual: Unique Indexes)', async (t) => {
  const collection = db.collection('unique')
  t.equal(await collection.createIndex({ email: 1 }, { unique: true }, {}), 'email_1')
  t.equal(await collection.createIndex({ email: 1 }, { unique: true }, {}), 'email_1', 'creating it again is a no-op')
  await collection.insertOne({ email: 'a@example.org' })
  const duplicate = await collection.insertOne({ email: 'a@example.org' }).catch((e: unknown) => e)
  t.equal((duplicate as MongoServerError).code, 11000)
  const batch = await collection.insertMany([{ email: 'b@example.org' }, { email: 'a@example.org' }, { email: 'c@example.org' }], { ordered: false }).catch((e: unknown) => e)
  t.equal((batch as MongoServerError).code, 11000)
  t.equal(await collection.countDocuments(), 3, 'an unordered insert keeps the other documents')
  const names = (await collection.listIndexes().toArray()).map((i) => i.name)
  t.same(names.sort(), ['_id_', 'email_1'])
})

t.test('refused regexes carry mongod codes (manual: $regex; error codes 51091, 51108, 2)', async (t) => {
  const pages = db.collection('pages')
  const code = async (filter: Document) => ((await pages.find(filter).toArray().catch((e: unknown) => e)) as MongoServerError).code
  t.equal(await code({ n: { $regex: '[' } }), 51091, 'a pattern PCRE2 cannot compile')
  t.equal(await code({ n: { $regex: '\\u0041' } }), 51091, '\\u is no PCRE2 escape')
  t.equal(await code({ n: { $regex: 'a{65536}' } }), 51091, 'a quantifier bound over 65535')
  t.equal(await code({ n: { $regex: 'a', $options: 'z' } }), 51108, 'an unknown option')
  t.equal(await code({ n: { $regex: 'a\0b' } }), 2, 'a NUL character')
})

t.test('a regex that backtracks without bound gives up within maxTimeMS instead of blocking the server', async (t) => {
  const slow = db.collection<{ _id: number, v: string }>('slow_regex')
  await slow.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, v: `${'a'.repeat(5000)}!` })))
  const started = Date.now()
  const outcome = await slow.find({ v: { $regex: '^(a|aa)+$' } }, { maxTimeMS: 1000 }).toArray().catch((e: unknown) => e)
  const elapsed = Date.now() - started
  // Exponential in the subject: unbounded it would never end. mongod ends it through PCRE2's match limit or maxTimeMS.
  t.ok(Array.isArray(outcome) ? outcome.length === 0 : (outcome as MongoServerError).code === 50, 'no match, or MaxTimeMSExpired')
  t.ok(elapsed < 10_000, `answered after ${elapsed} ms`)
})

t.test('errors carry mongod codes', async (t) => {
  const unknown = await db.command({ frobnicate: 1 }).catch((e: unknown) => e)
  t.equal((unknown as MongoServerError).code, 59, 'CommandNotFound (manual: Error Codes)')
  const operator = await db.collection('pages').find({ n: { $frobnicate: 1 } }).toArray().catch((e: unknown) => e)
  t.equal((operator as MongoServerError).code, 2, 'BadValue for an unknown operator')
  for (const filter of [{ $or: [] }, { $and: [] }, { $nor: [] }, { $or: [1] }, { $and: {} }]) {
    const error = await db.collection('pages').find(filter as Document).toArray().catch((e: unknown) => e)
    t.equal((error as MongoServerError).code, 2, `BadValue for ${JSON.stringify(filter)}: $and, $or and $nor take a non-empty array of documents (manual: $or)`)
  }
  t.equal((await db.command({ ping: 1 })).ok, 1)
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name)
  t.ok(names.includes('pages'), 'listCollections lists what was created')
})

t.test('aggregation stages the lists use: $project, $lookup with a pipeline, $unwind (manual: each stage\'s page)', async (t) => {
  const owners = db.collection<{ _id: number, name: string, tags?: string[] | string | null }>('lookup_owners')
  const items = db.collection<{ _id: number, k: number }>('lookup_items')
  await owners.insertMany([{ _id: 1, name: 'a', tags: ['x', 'y'] }, { _id: 2, name: 'b', tags: [] }, { _id: 3, name: 'c', tags: null }, { _id: 4, name: 'd' }, { _id: 5, name: 'e', tags: 'z' }])
  await items.insertMany([{ _id: 10, k: 1 }, { _id: 11, k: 2 }, { _id: 12, k: 1 }])
  t.strictSame(await owners.find({}, { projection: { _id: 1 }, sort: { _id: 1 }, limit: 2 }).toArray(), [{ _id: 1 }, { _id: 2 }], 'find: {_id: 1} returns _id alone (Projection)')
  t.strictSame(await owners.aggregate([{ $match: { _id: 1 } }, { $project: { _id: 1 } }]).toArray(), [{ _id: 1 }], '$project: {_id: 1} too')
  // $unwind: preserveNullAndEmptyArrays keeps null and missing as they are, and drops the field of an empty array.
  t.strictSame(await owners.aggregate([{ $sort: { _id: 1 } }, { $project: { tags: 1 } }, { $unwind: { path: '$tags', preserveNullAndEmptyArrays: true } }]).toArray(),
    [{ _id: 1, tags: 'x' }, { _id: 1, tags: 'y' }, { _id: 2 }, { _id: 3, tags: null }, { _id: 4 }, { _id: 5, tags: 'z' }])
  t.strictSame(await owners.aggregate([{ $sort: { _id: 1 } }, { $project: { tags: 1 } }, { $unwind: '$tags' }]).toArray(),
    [{ _id: 1, tags: 'x' }, { _id: 1, tags: 'y' }, { _id: 5, tags: 'z' }], 'without it, only documents with values')
  const looked = await owners.aggregate([
    { $match: { _id: { $in: [1, 2] } } },
    { $project: { _id: 1 } },
    { $lookup: { from: 'lookup_items', pipeline: [{ $match: { k: 1 } }, { $sort: { _id: -1 } }, { $project: { _id: 1 } }], as: 'found' } }
  ]).toArray()
  t.strictSame(looked, [{ _id: 1, found: [{ _id: 12 }, { _id: 10 }] }, { _id: 2, found: [{ _id: 12 }, { _id: 10 }] }], '$lookup runs its pipeline on from, in order')
  const none = await owners.aggregate([{ $match: { _id: 1 } }, { $lookup: { from: 'no_such_collection', pipeline: [], as: 'found' } }, { $project: { found: 1 } }]).toArray()
  t.strictSame(none, [{ _id: 1, found: [] }], 'a collection that does not exist gives []')
})

for (const [index, c] of updateCases.entries()) {
  t.test(`update: ${c.name} (${c.manual})`, async (t) => {
    const collection = db.collection<CaseDocument>(`update_case_${index}`)
    await collection.insertOne(c.doc)
    const result = await collection.updateOne({ _id: 1 }, c.update)
    t.equal(result.matchedCount, 1)
    const after = await collection.findOne({ _id: 1 })
    t.strictSame(after, c.expect)
    t.same(Object.keys(after ?? {}), Object.keys(c.expect), 'fields in the expected order')
  })
}

t.test('refused updates carry mongod codes and change nothing (manual: Error Codes)', async (t) => {
  for (const [index, c] of refusedUpdates.entries()) {
    const collection = db.collection<CaseDocument>(`refused_update_${index}`)
    await collection.insertOne(c.doc)
    const error = await collection.updateOne({ _id: 1 }, c.update).catch((e: unknown) => e)
    t.equal((error as MongoServerError).code, c.code, c.name)
    t.strictSame(await collection.findOne({ _id: 1 }), c.doc, `${c.name}: unchanged`)
  }
})

t.test('new fields are added in lexicographic order (manual: Update Operators, "Behavior")', async (t) => {
  const collection = db.collection<{ _id: number, z: number, a?: number, b?: number, c?: number }>('update_order')
  await collection.insertOne({ _id: 1, z: 0 })
  await collection.updateOne({ _id: 1 }, { $set: { b: 1, a: 1 }, $inc: { c: 1 } })
  t.same(Object.keys(await collection.findOne({ _id: 1 }) ?? {}), ['_id', 'z', 'a', 'b', 'c'])
})

t.test('$currentDate sets the date of the update (manual: $currentDate)', async (t) => {
  const collection = db.collection<{ _id: number, seen?: Date, log?: { at: Date } }>('update_current_date')
  await collection.insertOne({ _id: 1 })
  const before = Date.now()
  await collection.updateOne({ _id: 1 }, { $currentDate: { seen: true, 'log.at': { $type: 'date' } } })
  const doc = await collection.findOne({ _id: 1 })
  t.ok(doc?.seen instanceof Date && doc.seen.getTime() >= before - 1000, 'a Date')
  t.ok(doc?.log?.at instanceof Date)
})

t.test('upserts insert the equality fields of the query with the update (manual: update, "Upsert Behavior")', async (t) => {
  const collection = db.collection<{ _id: ObjectId | number, name: string, n?: number, meta?: { kind: string }, score?: number, s?: number, created?: boolean, v?: number }>('upserts')
  const inserted = await collection.updateOne({ name: 'a', n: { $eq: 1 }, 'meta.kind': 'x', score: { $gt: 3 } }, { $set: { s: 1 }, $setOnInsert: { created: true } }, { upsert: true })
  t.equal(inserted.upsertedCount, 1)
  t.equal(inserted.matchedCount, 0)
  t.ok(inserted.upsertedId instanceof ObjectId, 'an ObjectId _id when the query has none')
  t.strictSame(await collection.findOne({ _id: inserted.upsertedId as ObjectId }, { projection: { _id: 0 } }), { name: 'a', n: 1, meta: { kind: 'x' }, created: true, s: 1 })
  const again = await collection.updateOne({ name: 'a' }, { $set: { s: 2 }, $setOnInsert: { created: false } }, { upsert: true })
  t.same([again.matchedCount, again.modifiedCount, again.upsertedCount], [1, 1, 0], 'found: updated, $setOnInsert ignored')
  const replaced = await collection.replaceOne({ _id: 7 }, { name: 'r' }, { upsert: true })
  t.equal(replaced.upsertedId, 7, "a replacement upsert takes the query's _id")
  t.strictSame(await collection.findOne({ _id: 7 }), { _id: 7, name: 'r' })
  const raw = await db.command({ update: 'upserts', updates: [{ q: { _id: 8 }, u: { $set: { v: 1 } }, upsert: true }, { q: { _id: 7 }, u: { $set: { v: 1 } } }] })
  t.match(raw, { n: 2, nModified: 1, upserted: [{ index: 0, _id: 8 }], ok: 1 }, 'the reply of the update command')
})

t.test('multi updates every match; an update that changes nothing counts as matched, not modified (manual: update)', async (t) => {
  const collection = db.collection<{ _id: number, g: string, v: number }>('multi')
  await collection.insertMany([{ _id: 1, g: 'a', v: 1 }, { _id: 2, g: 'a', v: 2 }, { _id: 3, g: 'b', v: 1 }])
  const many = await collection.updateMany({ g: 'a' }, { $set: { v: 1 } })
  t.same([many.matchedCount, many.modifiedCount], [2, 1])
  t.strictSame(await collection.find({}, { sort: { _id: 1 } }).toArray(), [{ _id: 1, g: 'a', v: 1 }, { _id: 2, g: 'a', v: 1 }, { _id: 3, g: 'b', v: 1 }])
  const one = await collection.updateOne({ v: 1 }, { $inc: { v: 1 } })
  t.same([one.matchedCount, one.modifiedCount], [1, 1], 'updateOne changes one document')
  const replacement = await db.command({ update: 'multi', updates: [{ q: {}, u: { x: 1 }, multi: true }] })
  t.equal(replacement.writeErrors?.[0]?.code, 9, 'multi with a replacement document: FailedToParse, as a write error')
})

t.test('updates keep unique indexes (manual: Unique Indexes)', async (t) => {
  const collection = db.collection<{ _id: number, email: string }>('unique_updates')
  await collection.createIndex({ email: 1 }, { unique: true }, {})
  await collection.insertMany([{ _id: 1, email: 'a' }, { _id: 2, email: 'b' }])
  const duplicate = await collection.updateOne({ _id: 2 }, { $set: { email: 'a' } }).catch((e: unknown) => e)
  t.equal((duplicate as MongoServerError).code, 11000)
  await collection.updateOne({ _id: 2 }, { $set: { email: 'c' } })
  await collection.insertOne({ _id: 3, email: 'b' })
  t.equal(await collection.countDocuments({ email: 'b' }), 1, 'the old key is free once its document moved')
})

t.test('findAndModify: sort, new, fields, upsert and remove (manual: findAndModify)', async (t) => {
  const collection = db.collection<{ _id: number, q?: number, n: number }>('find_and_modify')
  await collection.insertMany([{ _id: 1, q: 1, n: 5 }, { _id: 2, q: 1, n: 3 }])
  const before = await collection.findOneAndUpdate({ q: 1 }, { $inc: { n: 1 } }, { sort: { n: 1 }, returnDocument: 'before' })
  t.strictSame(before, { _id: 2, q: 1, n: 3 }, 'the first by sort, as it was')
  const after = await collection.findOneAndUpdate({ q: 1 }, { $inc: { n: 1 } }, { sort: { n: -1 }, returnDocument: 'after', projection: { n: 1, _id: 0 } })
  t.strictSame(after, { n: 6 }, 'as it is now, projected')
  const upserted = await collection.findOneAndUpdate({ _id: 9 }, { $set: { n: 0 } }, { upsert: true, returnDocument: 'after' })
  t.strictSame(upserted, { _id: 9, n: 0 })
  const replaced = await collection.findOneAndReplace({ _id: 9 }, { n: 1 }, { returnDocument: 'after' })
  t.strictSame(replaced, { _id: 9, n: 1 })
  const removed = await collection.findOneAndDelete({ q: 1 }, { sort: { n: -1 } })
  t.strictSame(removed, { _id: 1, q: 1, n: 6 })
  t.equal(await collection.countDocuments(), 2)
  t.equal(await collection.findOneAndDelete({ q: 99 }), null, 'nothing found: null')
})

t.test('what the offline database refuses in an update rather than approximate', async (t) => {
  if ((await testDatabase()).kind !== 'offline-mongodb') return
  const collection = db.collection<{ _id: number, a?: Array<{ b: number }>, c?: number, n?: number }>('refusals')
  await collection.insertOne({ _id: 1, a: [{ b: 1 }] })
  const code = async (run: Promise<unknown>) => ((await run.catch((e: unknown) => e)) as MongoServerError).code
  t.equal(await code(collection.updateOne({ _id: 1 }, { $set: { 'a.$[x].b': 2 } }, { arrayFilters: [{ 'x.b': 1 }] })), 2, 'arrayFilters')
  t.equal(await code(collection.updateOne({ 'a.b': 1 }, { $set: { 'a.$.b': 2 } })), 2, 'the positional operator')
  t.equal(await code(collection.updateOne({ _id: 1 }, [{ $set: { c: 1 } }])), 2, 'a pipeline-style update')
  t.equal(await code(collection.updateOne({ _id: 1 }, { $bit: { n: { and: 1 } } })), 9, '$bit')
  t.equal(await code(collection.updateOne({ _id: 1 }, { $set: { c: 1 } }, { collation: { locale: 'fr' } })), 2, 'collation')
  const session = client.startSession()
  t.teardown(async () => { await session.endSession() })
  t.equal(await code(session.withTransaction(async () => await collection.insertOne({ _id: 2 }, { session }))), 263, 'a transaction: OperationNotSupportedInTransaction')
  t.equal(await collection.countDocuments({ _id: 2 }), 0, 'nothing of the transaction was written')
})

t.test('$sample: none of no documents, each document at most once, the size refused when negative (manual: $sample)', async (t) => {
  const collection = db.collection<{ _id: number }>('sample')
  t.same(await collection.aggregate([{ $sample: { size: 3 } }]).toArray(), [], 'an empty collection')
  await collection.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }])
  t.same(await collection.aggregate([{ $match: { _id: 9 } }, { $sample: { size: 1 } }]).toArray(), [], 'after a $match that keeps none')
  const all = await collection.aggregate<{ _id: number }>([{ $sample: { size: 10 } }]).toArray()
  t.same(all.map((d) => d._id).sort(), [1, 2, 3], 'more asked than there are: all of them, once')
  t.equal((await collection.aggregate([{ $sample: { size: 2 } }]).toArray()).length, 2)
  const code = async (spec: Document) => ((await collection.aggregate([{ $sample: spec }]).toArray().catch((e: unknown) => e)) as MongoServerError).code
  t.same([await code({ size: -1 }), await code({}), await code({ size: 'x' })], [28747, 28749, 28746])
  t.same(await collection.aggregate([{ $sample: { size: -0.5 } }]).toArray(), [], 'a size truncated to 0')
})
