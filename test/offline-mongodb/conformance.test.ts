// The stand-in against the MongoDB manual, through the driver: the find and sort cases of
// conformance-cases.ts, cursors and batches, projection, unique indexes, mongod's error codes and
// the aggregation stages the lists use (conformance-updates.test.ts has the updates).
import { MongoServerError, type CommandStartedEvent, type Document } from 'mongodb'
import t from 'tap'
import { clientOfTestDatabase } from '../helpers/database.js'
import { MISSING, cases } from './conformance-cases.js'

const { client, db } = await clientOfTestDatabase('conformance', { monitorCommands: true })

const documentsOf = (values: unknown[]): Document[] =>
  values.map((v, _id) => v === MISSING ? { _id } : { _id, v })

for (const [index, c] of cases.entries()) {
  t.test(`${c.name} (${c.manual})`, async (t) => {
    const collection = db.collection(`case_${index}`)
    await collection.insertMany(c.docs ?? documentsOf(c.values ?? []))
    // The cases' documents have numeric `_id`s, and the projection keeps only those.
    const found = await collection.find<{ _id: number }>(c.filter ?? {}, {
      projection: { _id: 1 },
      ...(c.collation === undefined ? {} : { collation: c.collation })
    }).sort(c.sort ?? {}).toArray()
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
    const listener = (event: CommandStartedEvent): void => {
      if (event.commandName === 'getMore') getMores.push(event)
    }
    client.on('commandStarted', listener)
    t.teardown(() => { client.off('commandStarted', listener) })
    const ids = (await collection.find({}, { batchSize: 7 }).sort({ _id: 1 }).toArray()).map((d) => d._id)
    t.same(ids, Array.from({ length: 250 }, (_, i) => i))
    t.equal(getMores.length, Math.ceil((250 - 7) / 7), 'one getMore per further batch of 7')
  })

  t.test('singleBatch closes the cursor after its first batch of batchSize documents (manual: find)', async (t) => {
    const reply = await db.command({ find: 'pages', filter: {}, sort: { _id: 1 }, batchSize: 3, singleBatch: true },
      { promoteLongs: false })
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
  const first = await db.command(
    { find: 'big', filter: {}, sort: { _id: 1 }, batchSize: 10, projection: { _id: 1, text: 1 } },
    { promoteLongs: false })
  t.same(first.cursor.firstBatch.map((d: Document) => d._id), [0, 1],
    'two 6 MiB documents; a third would pass 16 MiB')
  t.notOk(first.cursor.id.isZero(), 'the rest stays open')
  const next = await db.command({ getMore: first.cursor.id, collection: 'big' }, { promoteLongs: false })
  t.same(next.cursor.nextBatch.map((d: Document) => d._id), [2, 3], 'getMore batches are capped too')
  const last = await db.command({ getMore: first.cursor.id, collection: 'big' }, { promoteLongs: false })
  t.same(last.cursor.nextBatch.map((d: Document) => d._id), [4])
  t.ok(last.cursor.id.isZero())
})

t.test('projection keeps only the named fields, with _id unless excluded ' +
  '(manual: Project Fields to Return)', async (t) => {
  const collection = db.collection<{
    _id: number
    name: string
    secret: string
    nested: { keep: number, drop: number }
    list: Array<{ keep: number, drop: number }>
  }>('projection')
  await collection.insertOne(
    { _id: 1, name: 'a', secret: 'x', nested: { keep: 1, drop: 2 }, list: [{ keep: 1, drop: 2 }] })
  t.same(await collection.findOne({}, { projection: { name: 1, 'nested.keep': 1, 'list.keep': 1 } }),
    { _id: 1, name: 'a', nested: { keep: 1 }, list: [{ keep: 1 }] })
  t.same(await collection.findOne({}, { projection: { _id: 0, name: 1 } }), { name: 'a' })
  t.same(await collection.findOne({}, { projection: { secret: 0, nested: 0, list: 0 } }), { _id: 1, name: 'a' })
})

t.test('unique indexes reject duplicates with E11000 (manual: Unique Indexes)', async (t) => {
  const collection = db.collection('unique')
  t.equal(await collection.createIndex({ email: 1 }, { unique: true }, {}), 'email_1')
  t.equal(await collection.createIndex({ email: 1 }, { unique: true }, {}), 'email_1',
    'creating it again is a no-op')
  await collection.insertOne({ email: 'a@example.org' })
  const duplicate = await collection.insertOne({ email: 'a@example.org' }).catch((e: unknown) => e)
  t.equal((duplicate as MongoServerError).code, 11000)
  const batch = await collection.insertMany(
    [{ email: 'b@example.org' }, { email: 'a@example.org' }, { email: 'c@example.org' }],
    { ordered: false }
  ).catch((e: unknown) => e)
  t.equal((batch as MongoServerError).code, 11000)
  t.equal(await collection.countDocuments(), 3, 'an unordered insert keeps the other documents')
  const names = (await collection.listIndexes().toArray()).map((i) => i.name)
  t.same(names.sort(), ['_id_', 'email_1'])
})

t.test('refused regexes carry mongod codes (manual: $regex; error codes 51091, 51108, 2)', async (t) => {
  const pages = db.collection('pages')
  const code = async (filter: Document) =>
    ((await pages.find(filter).toArray().catch((e: unknown) => e)) as MongoServerError).code
  t.equal(await code({ n: { $regex: '[' } }), 51091, 'a pattern PCRE2 cannot compile')
  t.equal(await code({ n: { $regex: '\\u0041' } }), 51091, '\\u is no PCRE2 escape')
  t.equal(await code({ n: { $regex: 'a{65536}' } }), 51091, 'a quantifier bound over 65535')
  t.equal(await code({ n: { $regex: 'a', $options: 'z' } }), 51108, 'an unknown option')
  t.equal(await code({ n: { $regex: 'a\0b' } }), 2, 'a NUL character')
})

/** The time limit of the runaway regex below. */
const REGEX_MAX_TIME_MS = 1000
/**
 * A server looks at maxTimeMS between stretches of work, not during one regex test: the stand-in
 * every 32 documents and once after its scan (offline-mongodb/README.md), each test stopped at
 * 1,000,000 backtracks; mongod at its interrupt points, each test stopped by PCRE2's match limit.
 * Twenty bounded tests past the limit, the round trip, and a busy machine: a second.
 */
const REGEX_CHECK_SLACK_MS = 1000

t.test('a regex that backtracks without bound gives up within maxTimeMS instead of blocking the server', async (t) => {
  const slow = db.collection<{ _id: number, v: string }>('slow_regex')
  await slow.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, v: `${'a'.repeat(5000)}!` })))
  const started = Date.now()
  const outcome = await slow.find({ v: { $regex: '^(a|aa)+$' } }, { maxTimeMS: REGEX_MAX_TIME_MS }).toArray()
    .catch((e: unknown) => e)
  const elapsed = Date.now() - started
  // Exponential in the subject: unbounded it would never end. mongod ends it through PCRE2's match
  // limit or maxTimeMS.
  t.ok(Array.isArray(outcome) ? outcome.length === 0 : (outcome as MongoServerError).code === 50,
    'no match, or MaxTimeMSExpired')
  t.ok(elapsed <= REGEX_MAX_TIME_MS + REGEX_CHECK_SLACK_MS,
    `answered after ${elapsed} ms (maxTimeMS ${REGEX_MAX_TIME_MS}, and at most ${REGEX_CHECK_SLACK_MS} ms more)`)
})

t.test('errors carry mongod codes', async (t) => {
  const unknown = await db.command({ frobnicate: 1 }).catch((e: unknown) => e)
  t.equal((unknown as MongoServerError).code, 59, 'CommandNotFound (manual: Error Codes)')
  const operator = await db.collection('pages').find({ n: { $frobnicate: 1 } }).toArray().catch((e: unknown) => e)
  t.equal((operator as MongoServerError).code, 2, 'BadValue for an unknown operator')
  for (const filter of [{ $or: [] }, { $and: [] }, { $nor: [] }, { $or: [1] }, { $and: {} }]) {
    const error = await db.collection('pages').find(filter as Document).toArray().catch((e: unknown) => e)
    t.equal((error as MongoServerError).code, 2, `BadValue for ${JSON.stringify(filter)}: ` +
      '$and, $or and $nor take a non-empty array of documents (manual: $or)')
  }
  t.equal((await db.command({ ping: 1 })).ok, 1)
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name)
  t.ok(names.includes('pages'), 'listCollections lists what was created')
})

t.test('aggregation stages the lists use: $project, $lookup with a pipeline, $unwind ' +
  '(manual: each stage\'s page)', async (t) => {
  const owners = db.collection<{ _id: number, name: string, tags?: string[] | string | null }>('lookup_owners')
  const items = db.collection<{ _id: number, k: number }>('lookup_items')
  await owners.insertMany([
    { _id: 1, name: 'a', tags: ['x', 'y'] },
    { _id: 2, name: 'b', tags: [] },
    { _id: 3, name: 'c', tags: null },
    { _id: 4, name: 'd' },
    { _id: 5, name: 'e', tags: 'z' }
  ])
  await items.insertMany([{ _id: 10, k: 1 }, { _id: 11, k: 2 }, { _id: 12, k: 1 }])
  t.strictSame(await owners.find({}, { projection: { _id: 1 }, sort: { _id: 1 }, limit: 2 }).toArray(),
    [{ _id: 1 }, { _id: 2 }], 'find: {_id: 1} returns _id alone (Projection)')
  t.strictSame(await owners.aggregate([{ $match: { _id: 1 } }, { $project: { _id: 1 } }]).toArray(), [{ _id: 1 }],
    '$project: {_id: 1} too')
  // $unwind: preserveNullAndEmptyArrays keeps null and missing as they are, and drops the field of
  // an empty array.
  t.strictSame(await owners.aggregate([
    { $sort: { _id: 1 } }, { $project: { tags: 1 } }, { $unwind: { path: '$tags', preserveNullAndEmptyArrays: true } }
  ]).toArray(), [
    { _id: 1, tags: 'x' }, { _id: 1, tags: 'y' }, { _id: 2 }, { _id: 3, tags: null }, { _id: 4 }, { _id: 5, tags: 'z' }
  ])
  t.strictSame(
    await owners.aggregate([{ $sort: { _id: 1 } }, { $project: { tags: 1 } }, { $unwind: '$tags' }]).toArray(),
    [{ _id: 1, tags: 'x' }, { _id: 1, tags: 'y' }, { _id: 5, tags: 'z' }], 'without it, only documents with values')
  const looked = await owners.aggregate([
    { $match: { _id: { $in: [1, 2] } } },
    { $project: { _id: 1 } },
    {
      $lookup: {
        from: 'lookup_items',
        pipeline: [{ $match: { k: 1 } }, { $sort: { _id: -1 } }, { $project: { _id: 1 } }],
        as: 'found'
      }
    }
  ]).toArray()
  t.strictSame(looked, [{ _id: 1, found: [{ _id: 12 }, { _id: 10 }] }, { _id: 2, found: [{ _id: 12 }, { _id: 10 }] }],
    '$lookup runs its pipeline on from, in order')
  const none = await owners.aggregate([
    { $match: { _id: 1 } },
    { $lookup: { from: 'no_such_collection', pipeline: [], as: 'found' } },
    { $project: { found: 1 } }
  ]).toArray()
  t.strictSame(none, [{ _id: 1, found: [] }], 'a collection that does not exist gives []')
})

t.test('$sample: none of no documents, each document at most once, the size refused when negative ' +
  '(manual: $sample)', async (t) => {
  const collection = db.collection<{ _id: number }>('sample')
  t.same(await collection.aggregate([{ $sample: { size: 3 } }]).toArray(), [], 'an empty collection')
  await collection.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }])
  t.same(await collection.aggregate([{ $match: { _id: 9 } }, { $sample: { size: 1 } }]).toArray(), [],
    'after a $match that keeps none')
  const all = await collection.aggregate<{ _id: number }>([{ $sample: { size: 10 } }]).toArray()
  t.same(all.map((d) => d._id).sort(), [1, 2, 3], 'more asked than there are: all of them, once')
  t.equal((await collection.aggregate([{ $sample: { size: 2 } }]).toArray()).length, 2)
  const code = async (spec: Document) =>
    ((await collection.aggregate([{ $sample: spec }]).toArray().catch((e: unknown) => e)) as MongoServerError).code
  t.same([await code({ size: -1 }), await code({}), await code({ size: 'x' })], [28747, 28749, 28746])
  t.same(await collection.aggregate([{ $sample: { size: -0.5 } }]).toArray(), [], 'a size truncated to 0')
})
