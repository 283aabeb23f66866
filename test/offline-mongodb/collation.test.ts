// Collation and $elemMatch through the driver: the case tables (collation-cases.ts,
// elem-match-cases.ts), then count, aggregate, indexes, change streams and the refusals, each
// with mongod's code. Against real MongoDB too when MONGODB_URI is set; what only the stand-in
// refuses is tested only there.
import { MongoServerError, type CollationOptions, type Document } from 'mongodb'
import t from 'tap'
import { clientOfTestDatabase, testDatabase } from '../helpers/database.js'
import { FRENCH_NAMES, collationCases } from './collation-cases.js'
import { MISSING, type ConformanceCase } from './conformance-cases.js'
import { elemMatchCases } from './elem-match-cases.js'

const { db } = await clientOfTestDatabase('collation')
const M = 'https://www.mongodb.com/docs/manual/reference/'
const { kind } = await testDatabase()
const offline = kind === 'offline-mongodb'

const documentsOf = (values: unknown[]): Document[] => values.map((v, _id) => v === MISSING ? { _id } : { _id, v })
const codeOf = async (run: Promise<unknown>): Promise<unknown> =>
  ((await run.catch((e: unknown) => e)) as MongoServerError).code

function runCases (prefix: string, list: ConformanceCase[]): void {
  for (const [index, c] of list.entries()) {
    t.test(`${c.name} (${c.manual})`, async (t) => {
      const collection = db.collection(`${prefix}_${index}`)
      await collection.insertMany(c.docs ?? documentsOf(c.values ?? []))
      const options = { projection: { _id: 1 }, ...(c.collation === undefined ? {} : { collation: c.collation }) }
      const ids = (await collection.find<{ _id: number }>(c.filter ?? {}, options).sort(c.sort ?? {}).toArray())
        .map((doc) => doc._id)
      if (c.sort === undefined) t.same(ids.sort((a, b) => a - b), c.expect)
      else t.same(ids, c.expect)
    })
  }
}

runCases('collation_case', collationCases)
runCases('elem_match_case', elemMatchCases)

t.test('the French sort of names is Intl.Collator("fr")\'s order (manual: Collation)', async (t) => {
  const collection = db.collection<{ _id: number, v: string }>('french_names')
  await collection.insertMany(FRENCH_NAMES.map((v, _id) => ({ _id, v })))
  const sorted = await collection.find({}, { collation: { locale: 'fr' } }).sort({ v: 1 }).toArray()
  t.same(sorted.map((doc) => doc.v),
    [...FRENCH_NAMES].sort(new Intl.Collator('fr', { sensitivity: 'variant' }).compare))
})

t.test(`count and countDocuments take the collation (${M}command/count/)`, async (t) => {
  const collection = db.collection<{ _id: number, str: string }>('collation_count')
  await collection.insertMany([{ _id: 1, str: 'foo' }, { _id: 2, str: 'bar' }, { _id: 3, str: 'FOO' }])
  t.equal(await collection.countDocuments({ str: 'FOO' }, { collation: { locale: 'en_US', strength: 2 } }), 2)
  t.equal((await db.command({
    count: 'collation_count', query: { str: 'FOO' }, collation: { locale: 'en_US', strength: 2 }
  })).n, 2)
  t.equal((await db.command({ count: 'collation_count', query: { str: 'FOO' }, collation: { locale: 'en_US' } })).n, 1)
})

t.test(`find by _id under a collation finds the strings it calls equal (collation.js; ${M}collation/)`, async (t) => {
  const collection = db.collection<{ _id: string | number }>('collation_ids')
  await collection.insertMany([{ _id: 'foo' }, { _id: 'bar' }, { _id: 1 }])
  t.same(await collection.find({ _id: 'FOO' }).toArray(), [], 'binary: none')
  t.same(await collection.find({ _id: 'FOO' }, { collation: { locale: 'en_US' } }).toArray(), [], 'strength 3: none')
  t.same(await collection.find({ _id: 'FOO' }, { collation: { locale: 'en_US', strength: 2 } }).toArray(),
    [{ _id: 'foo' }])
  t.same(await collection.find({ _id: { $in: ['BAR', 'x'] } }, { collation: { locale: 'en_US', strength: 2 } })
    .toArray(), [{ _id: 'bar' }])
})

t.test('aggregate: $match, $sort, $group and $lookup under the collation ' +
  `(${M}operator/aggregation/group/)`, async (t) => {
  const items = db.collection<{ _id: number, tag: string, n: number }>('collation_agg')
  await items.insertMany([
    { _id: 1, tag: 'Apple', n: 1 }, { _id: 2, tag: 'apple', n: 2 },
    { _id: 3, tag: 'äpple', n: 4 }, { _id: 4, tag: 'pear', n: 8 }
  ])
  const collation: CollationOptions = { locale: 'en', strength: 2 }
  t.same((await items.aggregate([{ $match: { tag: 'APPLE' } }, { $sort: { _id: 1 } }], { collation }).toArray())
    .map((d) => d._id), [1, 2])
  t.same((await items.aggregate(
    [{ $sort: { tag: -1, _id: 1 } }, { $project: { _id: 1 } }], { collation: { locale: 'en' } }
  ).toArray()).map((d) => d._id), [4, 3, 1, 2])
  const groups = await items.aggregate(
    [{ $group: { _id: '$tag', n: { $sum: '$n' }, ids: { $push: '$_id' } } }, { $sort: { n: 1 } }], { collation }
  ).toArray()
  t.same(groups, [
    { _id: 'Apple', n: 3, ids: [1, 2] }, { _id: 'äpple', n: 4, ids: [3] }, { _id: 'pear', n: 8, ids: [4] }
  ], 'keys equal under strength 2 are one group, named by its first document')
  const nested = await items.aggregate([{ $group: { _id: { t: '$tag' }, c: { $sum: 1 } } }, { $sort: { c: -1 } }],
    { collation: { locale: 'en', strength: 1 } }).toArray()
  t.same(nested, [{ _id: { t: 'Apple' }, c: 3 }, { _id: { t: 'pear' }, c: 1 }], 'strings inside a document key too')
  const looked = await items.aggregate([
    { $match: { _id: 4 } },
    {
      $lookup: {
        from: 'collation_agg', pipeline: [{ $match: { tag: 'APPLE' } }, { $project: { _id: 1 } }], as: 'apples'
      }
    },
    { $project: { apples: 1 } }
  ], { collation }).toArray()
  t.same(looked, [{ _id: 4, apples: [{ _id: 1 }, { _id: 2 }] }],
    "$lookup's pipeline runs under the aggregate's collation")
})

t.test('an index keeps its collation, listed in full; {locale: "simple"} is none ' +
  `(${M}method/db.collection.createIndex/#collation-option)`, async (t) => {
  const collection = db.collection('collation_indexes')
  await collection.createIndex({ a: 1 }, { collation: { locale: 'fr_CA' } }, {})
  await collection.createIndex({ b: 1 }, { collation: { locale: 'en_US', strength: 2, numericOrdering: true } }, {})
  await collection.createIndex({ c: 1 }, { collation: { locale: 'simple' } }, {})
  const byName = new Map((await collection.listIndexes().toArray()).map((index) => [index.name as string, index]))
  const full = {
    caseLevel: false,
    caseFirst: 'off',
    numericOrdering: false,
    alternate: 'non-ignorable',
    maxVariable: 'punct',
    normalization: false,
    backwards: false,
    version: '57.1'
  }
  t.same(byName.get('a_1')?.collation, { ...full, locale: 'fr_CA', strength: 3, backwards: true })
  t.same(Object.keys(byName.get('a_1')?.collation ?? {}), ['locale', 'caseLevel', 'caseFirst', 'strength',
    'numericOrdering', 'alternate', 'maxVariable', 'normalization', 'backwards', 'version'])
  t.same(byName.get('b_1')?.collation, { ...full, locale: 'en_US', strength: 2, numericOrdering: true })
  t.notOk('collation' in (byName.get('c_1') ?? {}), 'the simple collation is not shown')
})

t.test(`a unique index with a collation takes strings it calls equal as one key (${M}collation/)`, async (t) => {
  const collection = db.collection<{ _id: number, email: string }>('collation_unique')
  await collection.createIndex({ email: 1 }, { unique: true, collation: { locale: 'en', strength: 2 } }, {})
  await collection.insertOne({ _id: 1, email: 'Ann@example.org' })
  t.equal(await codeOf(collection.insertOne({ _id: 2, email: 'ann@EXAMPLE.org' })), 11000)
  await collection.insertOne({ _id: 3, email: 'ánn@example.org' })
  t.equal(await collection.countDocuments(), 2)
})

t.test('a change stream opened with a collation filters its events by it ' +
  `(${M}method/db.collection.watch/)`, async (t) => {
  const collection = db.collection<{ _id: number, tag: string }>('collation_stream')
  await collection.insertOne({ _id: 0, tag: 'first' })
  const stream = collection.watch([{ $match: { 'fullDocument.tag': 'APPLE' } }],
    { collation: { locale: 'en', strength: 2 } })
  t.teardown(async () => { await stream.close() })
  await stream.tryNext()
  await collection.insertMany([{ _id: 1, tag: 'pear' }, { _id: 2, tag: 'apple' }])
  const event = await stream.next()
  t.equal(event.operationType === 'insert' ? event.documentKey._id : undefined, 2)
})

/** Collation documents mongod refuses, with its code (sources named in offline-mongodb/collation-spec.ts). */
const refusedCollations: Array<[string, unknown, number]> = [
  ['no locale: IDL 40414', { strength: 1 }, 40414],
  ['a locale ICU does not know', { locale: 'xx' }, 2],
  ['a locale not in its canonical spelling', { locale: 'EN' }, 2],
  ['an empty locale', { locale: '' }, 2],
  ['an unknown field: IDL 40415', { locale: 'en', bogus: 1 }, 40415],
  ['locale not a string', { locale: 5 }, 14],
  ['caseLevel not a bool', { locale: 'en', caseLevel: 'yes' }, 14],
  ['numericOrdering not a bool', { locale: 'en', numericOrdering: 1 }, 14],
  ['normalization not a bool', { locale: 'en', normalization: 'on' }, 14],
  ['backwards not a bool', { locale: 'en', backwards: 1 }, 14],
  ['strength not a number', { locale: 'en', strength: '2' }, 14],
  ['strength above 5: the IDL validator', { locale: 'en', strength: 6 }, 51024],
  ['strength below 0: the IDL validator', { locale: 'en', strength: -1 }, 51024],
  ['strength 0: no CollationStrength', { locale: 'en', strength: 0 }, 2],
  ['caseFirst neither upper, lower nor off', { locale: 'en', caseFirst: 'first' }, 2],
  ['alternate neither non-ignorable nor shifted', { locale: 'en', alternate: 'ignore' }, 2],
  ['maxVariable neither punct nor space', { locale: 'en', maxVariable: 'symbol' }, 2],
  ['backwards with strength 1', { locale: 'en', strength: 1, backwards: true }, 2],
  ['caseFirst at strength 2 without caseLevel', { locale: 'en', strength: 2, caseFirst: 'upper' }, 2],
  ['another collator version: IncompatibleCollationVersion', { locale: 'en', version: '1.0' }, 161]
]

t.test(`refused collations carry mongod's codes (${M}collation/)`, async (t) => {
  const collection = db.collection<{ _id: number, v: string }>('collation_refusals')
  await collection.insertOne({ _id: 1, v: 'a' })
  for (const [what, collation, code] of refusedCollations) {
    t.equal(await codeOf(collection.find({ v: 'a' }, { collation: collation as CollationOptions }).toArray()),
      code, what)
  }
  t.equal(await codeOf(db.command({ find: 'collation_refusals', collation: 'fr' })), 14,
    'a collation that is not a document: IDL TypeMismatch')
  t.equal(await codeOf(collection.aggregate([], { collation: { locale: 'xx' } }).toArray()), 2, 'aggregate')
  t.equal(await codeOf(db.command({ count: 'collation_refusals', collation: { locale: 'en', strength: 9 } })),
    51024, 'count')
  t.equal(await codeOf(collection.createIndex(
    { v: 1 }, { collation: { locale: 'en', bogus: 1 } as CollationOptions }, {}
  )), 40415, 'createIndexes')
  t.equal(await codeOf(collection.find({ v: { $elemMatch: { $gt: 1, b: 2 } } }).toArray()), 2,
    'an $elemMatch of the value form with a field name')
  t.same(await collection.find({ v: 'A' }, { collation: { locale: 'simple', strength: 1 } as CollationOptions })
    .toArray(), [], 'simple is binary, whatever else it says (collator_factory_icu.cpp)')
})

t.test('what the offline database refuses rather than approximate under a collation ' +
  '(offline-mongodb/README.md)', {
  skip: offline
    ? false
    : `the test database is ${kind}, not the offline stand-in: ` +
      'MongoDB itself runs these collations, only the stand-in refuses them'
}, async (t) => {
  const collection = db.collection<{ _id: number, v: string }>('collation_offline_refusals')
  await collection.insertMany([{ _id: 1, v: 'a' }, { _id: 2, v: 'o\u0301\u0323' }])
  const find = async (collation: CollationOptions, filter: Document = { v: 'a' }): Promise<unknown> =>
    await codeOf(collection.find(filter, { collation }).toArray())
  t.equal(await find({ locale: 'en', strength: 4, alternate: 'shifted' }), 2,
    'the quaternary level of shifted characters')
  t.equal(await find({ locale: 'en', strength: 5, alternate: 'shifted' }), 2, 'the same at strength 5')
  t.equal(await find({ locale: 'ja', strength: 4 }), 2, "ja's quaternary kana differences")
  t.equal(await find({ locale: 'en', alternate: 'shifted', maxVariable: 'space' }), 2, 'shifted spaces alone')
  t.equal(await find({ locale: 'de@collation=phonebook', backwards: true }), 2, 'backwards with a tailored locale')
  t.equal(await find({ locale: 'sv', backwards: true }), 2, 'backwards with a tailored locale')
  t.equal(await find({ locale: 'de@collation=search' }), 2, 'the search collations')
  t.equal(await find({ locale: 'zh@collation=big5han' }), 2, 'an order current ICU no longer ships')
  t.same((await collection.find({ v: 'o\u0323\u0301' }, { collation: { locale: 'en' } }).toArray()).map((d) => d._id),
    [2], 'a string not in FCD form is compared as normalization would (ICU promises nothing else)')
  t.same(await collection.find({ v: 'o\u0323\u0301' }, { collation: { locale: 'en', normalization: true } }).toArray(),
    [{ _id: 2, v: 'o\u0301\u0323' }], 'with normalization: true it is compared')
  const aggregate = async (pipeline: Document[]): Promise<unknown> =>
    await codeOf(collection.aggregate(pipeline, { collation: { locale: 'en' } }).toArray())
  t.equal(await aggregate([{ $group: { _id: null, tags: { $addToSet: '$v' } } }]), 2, '$addToSet compares its values')
  t.equal(await aggregate([{ $addFields: { same: { $eq: ['$v', 'A'] } } }]), 2, 'an expression that compares strings')
  t.equal(await aggregate([{ $bucketAuto: { groupBy: '$v', buckets: 2 } }]), 2, 'a stage mingo runs that orders values')
  t.same(await collection.aggregate(
    [{ $match: { _id: 1 } }, { $addFields: { w: { $concat: ['$v', '!'] } } }], { collation: { locale: 'en' } }
  ).toArray(), [{ _id: 1, v: 'a', w: 'a!' }], 'an expression that compares nothing runs')
  t.equal(await aggregate([{ $addFields: { same: { $gt: [{ $concat: ['$v'] }, { $toString: 5 }] } } }]), 2,
    'two expressions compared: refused')
  await collection.createIndex({ v: 1 }, { collation: { locale: 'en', strength: 4, alternate: 'shifted' } }, {})
  t.equal((await collection.listIndexes().toArray()).find((index) => index.name === 'v_1')?.collation?.strength, 4,
    'an index only records its collation: any valid one')
  t.equal(await codeOf(collection.updateOne({ v: 'A' }, { $set: { w: 1 } },
    { collation: { locale: 'en', strength: 2 } })), 2, 'update keeps refusing collation')
  t.equal(await codeOf(collection.deleteOne({ v: 'A' }, { collation: { locale: 'en', strength: 2 } })), 2,
    'delete keeps refusing collation')
  t.equal(await codeOf(collection.findOneAndDelete({ v: 'A' }, { collation: { locale: 'en', strength: 2 } })), 2,
    'findAndModify keeps refusing collation')
})

t.test('an order against a number in an expression, under a collation: BSON\'s order across types ' +
  `(${M}bson-type-comparison-order/)`, async (t) => {
  const collection = db.collection<{ _id: number, v?: unknown }>('collation_expression_order')
  await collection.insertMany([{ _id: 1, v: 'a' }, { _id: 2, v: 3 }, { _id: 3, v: Number.NaN }, { _id: 4, v: Infinity },
    { _id: 5 }, { _id: 6, v: null }, { _id: 7, v: [1] }])
  const rows = await collection.aggregate([
    { $project: { above: { $gt: ['$v', -Infinity] }, below: { $lt: ['$v', Infinity] }, atMost: { $lte: [5, '$v'] } } },
    { $sort: { _id: 1 } }
  ], { collation: { locale: 'fr' } }).toArray()
  t.same(rows, [
    { _id: 1, above: true, below: false, atMost: true },
    { _id: 2, above: true, below: true, atMost: false },
    { _id: 3, above: false, below: true, atMost: false },
    { _id: 4, above: true, below: false, atMost: true },
    { _id: 5, above: false, below: true, atMost: false },
    { _id: 6, above: false, below: true, atMost: false },
    { _id: 7, above: true, below: false, atMost: true }
  ], 'a string and an array sort after every number, NaN before, missing and null before all numbers')
})
