// Updates through the driver against the MongoDB manual: the cases of update-cases.ts and the
// refused ones, upserts, multi, unique indexes, findAndModify, and what the stand-in refuses.
import { ObjectId, type MongoServerError } from 'mongodb'
import t from 'tap'
import { clientOfTestDatabase, testDatabase } from '../helpers/database.js'
import { refusedUpdates, updateCases } from './update-cases.js'

const { client, db } = await clientOfTestDatabase('conformance_updates')
const { kind } = await testDatabase()

/**
 * A document of the update cases (update-cases.ts): a numeric `_id`, optional here because
 * the cases type their documents as plain `Document`s.
 */
interface CaseDocument { _id?: number }

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
  // The date is the server's: read on the server's clock (hello's localTime) just before and after
  // the update, it lies between the two, whatever this machine's clock says.
  const serverTime = async (): Promise<number> => ((await db.admin().command({ hello: 1 })).localTime as Date).getTime()
  const before = await serverTime()
  await collection.updateOne({ _id: 1 }, { $currentDate: { seen: true, 'log.at': { $type: 'date' } } })
  const after = await serverTime()
  const doc = await collection.findOne({ _id: 1 })
  for (const [field, date] of [['seen', doc?.seen], ['log.at', doc?.log?.at]] as const) {
    t.ok(date instanceof Date && date.getTime() >= before && date.getTime() <= after,
      `${field}: a Date of the update (${date?.toISOString()}, between ${before} and ${after} on the server's clock)`)
  }
})

t.test('upserts insert the equality fields of the query with the update ' +
  '(manual: update, "Upsert Behavior")', async (t) => {
  const collection = db.collection<{
    _id: ObjectId | number
    name: string
    n?: number
    meta?: { kind: string }
    score?: number
    s?: number
    created?: boolean
    v?: number
  }>('upserts')
  const inserted = await collection.updateOne({ name: 'a', n: { $eq: 1 }, 'meta.kind': 'x', score: { $gt: 3 } },
    { $set: { s: 1 }, $setOnInsert: { created: true } }, { upsert: true })
  t.equal(inserted.upsertedCount, 1)
  t.equal(inserted.matchedCount, 0)
  t.ok(inserted.upsertedId instanceof ObjectId, 'an ObjectId _id when the query has none')
  t.strictSame(await collection.findOne({ _id: inserted.upsertedId as ObjectId }, { projection: { _id: 0 } }),
    { name: 'a', n: 1, meta: { kind: 'x' }, created: true, s: 1 })
  const again = await collection.updateOne({ name: 'a' }, { $set: { s: 2 }, $setOnInsert: { created: false } },
    { upsert: true })
  t.same([again.matchedCount, again.modifiedCount, again.upsertedCount], [1, 1, 0],
    'found: updated, $setOnInsert ignored')
  const replaced = await collection.replaceOne({ _id: 7 }, { name: 'r' }, { upsert: true })
  t.equal(replaced.upsertedId, 7, "a replacement upsert takes the query's _id")
  t.strictSame(await collection.findOne({ _id: 7 }), { _id: 7, name: 'r' })
  const raw = await db.command({
    update: 'upserts',
    updates: [{ q: { _id: 8 }, u: { $set: { v: 1 } }, upsert: true }, { q: { _id: 7 }, u: { $set: { v: 1 } } }]
  })
  t.match(raw, { n: 2, nModified: 1, upserted: [{ index: 0, _id: 8 }], ok: 1 }, 'the reply of the update command')
})

t.test('multi updates every match; an update that changes nothing counts as matched, not modified ' +
  '(manual: update)', async (t) => {
  const collection = db.collection<{ _id: number, g: string, v: number }>('multi')
  await collection.insertMany([{ _id: 1, g: 'a', v: 1 }, { _id: 2, g: 'a', v: 2 }, { _id: 3, g: 'b', v: 1 }])
  const many = await collection.updateMany({ g: 'a' }, { $set: { v: 1 } })
  t.same([many.matchedCount, many.modifiedCount], [2, 1])
  t.strictSame(await collection.find({}, { sort: { _id: 1 } }).toArray(),
    [{ _id: 1, g: 'a', v: 1 }, { _id: 2, g: 'a', v: 1 }, { _id: 3, g: 'b', v: 1 }])
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
  const before = await collection.findOneAndUpdate({ q: 1 }, { $inc: { n: 1 } },
    { sort: { n: 1 }, returnDocument: 'before' })
  t.strictSame(before, { _id: 2, q: 1, n: 3 }, 'the first by sort, as it was')
  const after = await collection.findOneAndUpdate({ q: 1 }, { $inc: { n: 1 } },
    { sort: { n: -1 }, returnDocument: 'after', projection: { n: 1, _id: 0 } })
  t.strictSame(after, { n: 6 }, 'as it is now, projected')
  const upserted = await collection.findOneAndUpdate({ _id: 9 }, { $set: { n: 0 } },
    { upsert: true, returnDocument: 'after' })
  t.strictSame(upserted, { _id: 9, n: 0 })
  const replaced = await collection.findOneAndReplace({ _id: 9 }, { n: 1 }, { returnDocument: 'after' })
  t.strictSame(replaced, { _id: 9, n: 1 })
  const removed = await collection.findOneAndDelete({ q: 1 }, { sort: { n: -1 } })
  t.strictSame(removed, { _id: 1, q: 1, n: 6 })
  t.equal(await collection.countDocuments(), 2)
  t.equal(await collection.findOneAndDelete({ q: 99 }), null, 'nothing found: null')
})

t.test('what the offline database refuses in an update rather than approximate', {
  skip: kind === 'offline-mongodb'
    ? false
    : `the test database is ${kind}, not the offline stand-in: ` +
      'MongoDB itself runs these updates, only the stand-in refuses them'
}, async (t) => {
  const collection = db.collection<{ _id: number, a?: Array<{ b: number }>, c?: number, n?: number }>('refusals')
  await collection.insertOne({ _id: 1, a: [{ b: 1 }] })
  const code = async (run: Promise<unknown>) => ((await run.catch((e: unknown) => e)) as MongoServerError).code
  t.equal(await code(collection.updateOne({ _id: 1 }, { $set: { 'a.$[x].b': 2 } }, { arrayFilters: [{ 'x.b': 1 }] })),
    2, 'arrayFilters')
  t.equal(await code(collection.updateOne({ 'a.b': 1 }, { $set: { 'a.$.b': 2 } })), 2, 'the positional operator')
  t.equal(await code(collection.updateOne({ _id: 1 }, [{ $set: { c: 1 } }])), 2, 'a pipeline-style update')
  t.equal(await code(collection.updateOne({ _id: 1 }, { $bit: { n: { and: 1 } } })), 9, '$bit')
  t.equal(await code(collection.updateOne({ _id: 1 }, { $set: { c: 1 } }, { collation: { locale: 'fr' } })), 2,
    'collation')
  const session = client.startSession()
  t.teardown(async () => { await session.endSession() })
  t.equal(await code(session.withTransaction(async () => await collection.insertOne({ _id: 2 }, { session }))), 263,
    'a transaction: OperationNotSupportedInTransaction')
  t.equal(await collection.countDocuments({ _id: 2 }), 0, 'nothing of the transaction was written')
})
