// Compiled queries run on the test database (the offline stand-in here, real MongoDB with
// MONGODB_URI): the documents selected are the ones docs/query-language.md and MongoDB say.
import { ObjectId, type Document } from 'mongodb'
import t from 'tap'
import type { TObject } from '@sinclair/typebox'
import { Activity, Session } from '../../schemas/kinds.js'
import { clientOfTestDatabase } from '../helpers/database.js'
import { compileFor, jsonFilter } from '../helpers/list-query.js'

const { db } = await clientOfTestDatabase('list_query')

const at = (iso: string) => new Date(iso)
await db.collection('sessions').insertMany([
  { _id: 'a' as never, start: at('2023-12-31T23:59:59.999Z') },
  { _id: 'b' as never, start: at('2024-01-01T00:00:00.000Z') },
  { _id: 'c' as never, start: at('2024-06-01T00:00:00.000Z') },
  { _id: 'd' as never, start: at('2024-06-01T23:59:59.999Z') },
  { _id: 'e' as never, start: at('2024-06-02T00:00:00.000Z') },
  { _id: 'f' as never, start: at('2025-01-01T00:00:00.000Z') },
  { _id: 'g' as never }
])
const music = new ObjectId()
await db.collection('activities').insertMany([
  { _id: 'yoga' as never, name: 'Yoga flow', tags: ['wellness', 'morning'], active: true, category: music },
  { _id: 'YOGA' as never, name: 'SUNRISE YOGA', tags: ['wellness'], active: false },
  {
    _id: 'salsa' as never,
    name: 'Salsa',
    tags: ['dance', 'evening', 'music'],
    active: true,
    category: music,
    customFields: { level: 'beginner' }
  },
  { _id: 'jazz' as never, name: 'Jazz jam', tags: [], customFields: { level: 'advanced' } },
  { _id: 'bare' as never }
])

async function ids (schema: TObject, collection: string, query: string): Promise<string[]> {
  const result = compileFor(schema, query)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  const { filter, sort, skip, limit } = result.query
  const docs: Document[] = await db.collection(collection).find(filter).sort(sort).skip(skip).limit(limit).toArray()
  return docs.map((d) => String(d._id))
}

const dateCases: Array<[unknown, string[]]> = [
  ['2024-06-01', ['c', 'd']],
  [{ $ne: '2024-06-01' }, ['a', 'b', 'e', 'f', 'g']],
  [{ $gt: '2024-06-01' }, ['e', 'f']],
  [{ $gte: '2024-06-01' }, ['c', 'd', 'e', 'f']],
  [{ $lt: '2024-06-01' }, ['a', 'b']],
  [{ $lte: '2024-06-01' }, ['a', 'b', 'c', 'd']],
  ['2024', ['b', 'c', 'd', 'e']],
  [{ $gt: '2024' }, ['f']],
  [{ $lte: '2023' }, ['a']],
  [{ $in: ['2023', '2024-06-02'] }, ['a', 'e']],
  [{ $nin: ['2024'] }, ['a', 'f', 'g']],
  [{ $eq: '2024-06-01T00:00:00Z' }, ['c']],
  [{ $gte: '2024-06-01T02:00:00+02:00' }, ['c', 'd', 'e', 'f']],
  [{ $gte: '2024', $lt: '2024-06-02' }, ['b', 'c', 'd']],
  [{ $eq: '2024-06-01', $gte: '2024-06-01T12:00:00Z' }, ['d']],
  [{ $exists: false }, ['g']]
]
for (const [condition, expected] of dateCases) {
  t.test(`start ${JSON.stringify(condition)}`, async (t) => {
    t.same(await ids(Session, 'sessions', jsonFilter({ start: condition })), expected)
  })
}

t.test('the same request in bracket notation selects the same documents', async (t) => {
  t.same(await ids(Session, 'sessions', 'filter[start][$gte]=2024&filter[start][$lt]=2024-06-02'), ['b', 'c', 'd'])
  t.same(await ids(Session, 'sessions', 'filter[start][$nin]=2024'), ['a', 'f', 'g'])
})

const activityCases: Array<[string, string[]]> = [
  [jsonFilter({ name: { $regex: 'yoga', $options: 'i' } }), ['YOGA', 'yoga']],
  [jsonFilter({ name: { $regex: '^S' } }), ['YOGA', 'salsa']],
  [jsonFilter({ active: true, name: { $regex: 'a' } }), ['salsa', 'yoga']],
  [jsonFilter({ active: { $ne: true } }), ['YOGA', 'bare', 'jazz']],
  [jsonFilter({ tags: 'wellness' }), ['YOGA', 'yoga']],
  [jsonFilter({ tags: { $all: ['dance', 'music'] } }), ['salsa']],
  [jsonFilter({ tags: { $size: 0 } }), ['jazz']],
  [jsonFilter({ tags: { $nin: ['wellness'] } }), ['bare', 'jazz', 'salsa']],
  [jsonFilter({ category: music.toHexString() }), ['salsa', 'yoga']],
  [jsonFilter({ category: { $exists: false } }), ['YOGA', 'bare', 'jazz']],
  [jsonFilter({ 'customFields.level': { $in: ['beginner'] } }), ['salsa']],
  ['filter[tags][$in]=music,morning', ['salsa', 'yoga']]
]
for (const [query, expected] of activityCases) {
  t.test(`activities ?${decodeURIComponent(query)}`, async (t) => {
    t.same((await ids(Activity, 'activities', query)).sort(), expected.sort())
  })
}

t.test('sort puts missing values first ascending, with _id breaking ties', async (t) => {
  t.same(await ids(Activity, 'activities', 'sort=%2Bname'), ['bare', 'jazz', 'YOGA', 'salsa', 'yoga'],
    'missing first, then binary order: Jazz, SUNRISE, Salsa, Yoga')
  t.same(await ids(Activity, 'activities', 'sort=-active'), ['salsa', 'yoga', 'YOGA', 'bare', 'jazz'])
})

t.test('limit=10&skip=20 gives the 21st to the 30th result (SPEC: Limit and skip)', async (t) => {
  const collection = db.collection('many')
  await collection.insertMany(Array.from({ length: 45 }, (_, i) => ({ name: `n${String(i).padStart(2, '0')}` })))
  const result = compileFor(Activity, 'sort=%2Bname&limit=10&skip=20')
  t.ok(result.ok)
  if (!result.ok) return
  const { filter, sort, skip, limit } = result.query
  const names = (await collection.find(filter).sort(sort).skip(skip).limit(limit).toArray()).map((d) => d.name)
  t.same(names, Array.from({ length: 10 }, (_, i) => `n${20 + i}`))
})
