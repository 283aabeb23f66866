// $or and $and against the database's own evaluation: random logical filters over every field
// type of activities, sent to the list as JSON and as brackets, walked page by page with `next`
// and counted, give exactly what MongoDB's find gives for the same MongoDB filter (the values
// written as MongoDB reads them: ObjectIds, dates) within the project, in the same order and
// in the service's collation.
// On the stand-in here; on real MongoDB with MONGODB_URI.
import fc from 'fast-check'
import { ObjectId, type Document } from 'mongodb'
import t from 'tap'
import { parseCollation } from '../../database/collation.js'
import { build } from '../helpers/build.js'

const RUNS = Number(process.env.LOGICAL_RUNS ?? 60)

const fastify = await build(t)
const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
// MongoDB is asked in the service's collation, as the service asks it.
const collation = parseCollation(fastify.config.COLLATION)
const inCollation = collation === undefined ? {} : { collation }

const NAMES = ['Yoga', 'yoga flow', 'Salsa', 'Jazz jam', 'Dance', 'Aqua']
const TAGS = ['wellness', 'morning', 'dance', 'music', 'evening']
const CATEGORIES = ['665f1c2e9b1d4a3f5c7e8a01', '665f1c2e9b1d4a3f5c7e8a02', '665f1c2e9b1d4a3f5c7e8a03']
const DATES = [
  '2024-01-01T00:00:00.000Z', '2024-03-15T08:30:00.000Z', '2024-06-01T12:00:00.000Z', '2025-01-01T00:00:00.000Z'
]
const LEVELS = ['beginner', 'advanced', 1, 2, 3]

const project = new ObjectId()
const elsewhere = new ObjectId()
const documentArbitrary = fc.record({
  name: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
  tags: fc.option(fc.subarray(TAGS, { maxLength: 3 }), { nil: undefined }),
  category: fc.option(fc.constantFrom(...CATEGORIES).map((id) => new ObjectId(id)), { nil: undefined }),
  active: fc.option(fc.boolean(), { nil: undefined }),
  createdAt: fc.option(fc.constantFrom(...DATES).map((iso) => new Date(iso)), { nil: undefined }),
  customFields: fc.option(fc.record({ level: fc.constantFrom(...LEVELS) }, { requiredKeys: [] }), { nil: undefined })
}, { requiredKeys: [] })
const documents = fc.sample(documentArbitrary, { numRuns: 60, seed: 34 })
await db.collection('projects').insertMany([{ _id: project, name: 'Logical' }, { _id: elsewhere, name: 'Elsewhere' }])
// The same documents in another project: no branch may reach them.
await db.collection('activities').insertMany(documents.flatMap((doc) =>
  [{ ...doc, project }, { ...doc, project: elsewhere }]))

/** Each field: its values as JSON, its operators, and how MongoDB reads a JSON value of it. */
const FIELDS: Record<string, { values: unknown[], ops: string[], mongo?: (value: unknown) => unknown }> = {
  name: { values: NAMES, ops: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$regex', '$exists'] },
  tags: { values: TAGS, ops: ['$eq', '$ne', '$in', '$nin', '$all', '$size', '$regex', '$exists'] },
  category: {
    values: CATEGORIES, ops: ['$eq', '$ne', '$in', '$nin', '$exists'], mongo: (id) => new ObjectId(id as string)
  },
  active: { values: [true, false], ops: ['$eq', '$ne', '$in', '$nin', '$exists'] },
  createdAt: {
    values: DATES,
    ops: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'],
    mongo: (iso) => new Date(iso as string)
  },
  'customFields.level': { values: LEVELS, ops: ['$eq', '$ne', '$gt', '$lt', '$in', '$nin', '$regex', '$exists'] }
}

function operand (field: string, op: string): fc.Arbitrary<unknown> {
  const { values } = FIELDS[field] as (typeof FIELDS)[string]
  switch (op) {
    case '$in': case '$nin': case '$all':
      return fc.uniqueArray(fc.constantFrom(...values), { minLength: 1, maxLength: 3 })
    case '$exists': return fc.boolean()
    case '$size': return fc.nat({ max: 3 })
    case '$regex': return fc.constantFrom('^y', 'a', 'Y', 'o.a', 'n$', '^[a-d]')
    default: return fc.constantFrom(...values)
  }
}

const condition = (field: string): fc.Arbitrary<unknown> => fc.oneof(
  fc.constantFrom(...(FIELDS[field] as (typeof FIELDS)[string]).values),
  fc.uniqueArray(fc.constantFrom(...(FIELDS[field] as (typeof FIELDS)[string]).ops), { minLength: 1, maxLength: 2 })
    .chain((ops) => fc.tuple(...ops.map((op) => operand(field, op).map((value) => [op, value] as const))))
    .chain((entries) => entries.some(([op]) => op === '$regex')
      ? fc.constantFrom('', 'i')
        .map((flags) => Object.fromEntries(flags === '' ? entries : [...entries, ['$options', flags]]))
      : fc.constant(Object.fromEntries(entries)))
)

/** A filter at nesting level `depth`: field conditions, and below level 3, `$or`/`$and` of such filters. */
function filterAt (depth: number): fc.Arbitrary<Document> {
  const fields = fc.uniqueArray(fc.constantFrom(...Object.keys(FIELDS)), { maxLength: 2 })
    .chain((names) => fc.tuple(...names.map((name) => condition(name).map((c) => [name, c] as const))))
    .map((entries) => Object.fromEntries(entries) as Document)
  if (depth >= 3) return fields
  const branches = fc.array(filterAt(depth + 1), { minLength: 1, maxLength: depth === 0 ? 4 : 2 })
  const logical = fc.record({ $or: branches, $and: branches }, { requiredKeys: [] })
  return fc.tuple(fields, fc.oneof({ weight: depth === 0 ? 4 : 1, arbitrary: logical },
    { weight: depth === 0 ? 1 : 2, arbitrary: fc.constant({}) }))
    .map(([a, b]) => ({ ...a, ...b }))
}

/** Field conditions over all branches: a value one, an object of operators one per operator. */
const conditionCount = (filter: Document): number => Object.entries(filter).reduce((sum, [key, value]) => sum +
  (key === '$or' || key === '$and'
    ? (value as Document[]).reduce((n, branch) => n + conditionCount(branch), 0)
    : value !== null && typeof value === 'object' ? Object.keys(value).length : 1), 0)

/** The same filter as MongoDB reads it. */
function asMongo (filter: Document): Document {
  return Object.fromEntries(Object.entries(filter).map(([key, value]) => {
    if (key === '$or' || key === '$and') return [key, (value as Document[]).map(asMongo)]
    const read = FIELDS[key]?.mongo ?? ((v: unknown) => v)
    if (value === null || typeof value !== 'object') return [key, read(value)]
    return [key, Object.fromEntries(Object.entries(value as Document).map(([op, operand]) => {
      if (op === '$in' || op === '$nin' || op === '$all') return [op, (operand as unknown[]).map(read)]
      if (op === '$exists' || op === '$size' || op === '$regex' || op === '$options') return [op, operand]
      return [op, read(operand)]
    }))]
  }))
}

/** Whether a branch is `{}`, which brackets cannot write (a branch is written by its conditions). */
const hasEmptyBranch = (filter: Document): boolean => Object.entries(filter).some(([key, value]) =>
  (key === '$or' || key === '$and') &&
    (value as Document[]).some((branch) => Object.keys(branch).length === 0 || hasEmptyBranch(branch)))

/** Brackets: `filter[$or][0][name][$in]=a,b`. Values here hold no comma. */
function asBrackets (filter: Document, prefix = 'filter'): string[] {
  return Object.entries(filter).flatMap(([key, value]) => {
    if (key === '$or' || key === '$and') {
      return (value as Document[]).flatMap((branch, i) => asBrackets(branch, `${prefix}[${key}][${i}]`))
    }
    if (value === null || typeof value !== 'object') return [`${prefix}[${key}]=${encodeURIComponent(String(value))}`]
    return Object.entries(value as Document).map(([op, operand]) =>
      `${prefix}[${key}][${op}]=${encodeURIComponent(Array.isArray(operand) ? operand.join(',') : String(operand))}`)
  })
}

interface Body { data: Document[], next?: string, total?: number }

async function walk (query: string, limit: number): Promise<{ ids: string[], total: number | undefined }> {
  const ids: string[] = []
  let total: number | undefined
  let url = `/projects/${String(project)}/activities?${query}&limit=${limit}&count=true`
  for (let pages = 0; pages < 200; pages++) {
    const res = await fastify.inject(url)
    if (res.statusCode !== 200) throw new Error(`${decodeURIComponent(url)}: ${res.statusCode} ${res.body}`)
    const body = res.json<Body>()
    if (total !== undefined && body.total !== total) {
      throw new Error(`total changed from ${total} to ${String(body.total)} between pages`)
    }
    total = body.total
    ids.push(...body.data.map((d) => d._id as string))
    if (body.next === undefined) return { ids, total }
    url = `/projects/${String(project)}/activities?${query}&limit=${limit}&count=true&after=${body.next}`
  }
  throw new Error('too many pages')
}

const SORTS: Array<[string, Document]> = [
  ['', { _id: 1 }],
  ['sort=%2Bname', { name: 1, _id: 1 }],
  ['sort=-createdAt', { createdAt: -1, _id: 1 }],
  ['sort=-active,%2BcustomFields.level', { active: -1, 'customFields.level': 1, _id: 1 }]
]

t.test('random $or/$and filters: pages, cursor walks and counts equal MongoDB\'s own answer, ' +
  'in both notations', async (t) => {
  let matched = 0
  let logical = 0
  await fc.assert(fc.asyncProperty(
    filterAt(0),
    fc.integer({ min: 0, max: SORTS.length - 1 }),
    fc.integer({ min: 1, max: 9 }),
    async (filter, sortIndex, limit) => {
      // Larger filters are refused (FILTER_TOO_COMPLEX, checked in test/plugins/list-query.test.ts).
      fc.pre(conditionCount(filter) <= 50)
      const [sort, mongoSort] = SORTS[sortIndex] as [string, Document]
      const expected = (await db.collection('activities').find({ $and: [asMongo(filter), { project }] },
        { projection: { _id: 1 }, sort: mongoSort, ...inCollation }).toArray()).map((d) => String(d._id))
      if (expected.length > 0) matched++
      if ('$or' in filter || '$and' in filter) logical++
      const json = `filter=${encodeURIComponent(JSON.stringify(filter))}${sort === '' ? '' : `&${sort}`}`
      const walked = await walk(json, limit)
      if (JSON.stringify(walked.ids) !== JSON.stringify(expected) || walked.total !== expected.length) {
        throw new Error(`${JSON.stringify(filter)} ${sort}: the list walked ${walked.ids.length} ` +
          `(total ${String(walked.total)}), MongoDB finds ${expected.length}`)
      }
      const brackets = asBrackets(filter)
      if (brackets.length > 0 && !hasEmptyBranch(filter)) {
        const bracketWalk = await walk(`${brackets.join('&')}${sort === '' ? '' : `&${sort}`}`, limit)
        if (JSON.stringify(bracketWalk.ids) !== JSON.stringify(expected)) {
          throw new Error(`${brackets.join('&')}: brackets differ from JSON`)
        }
      }
    }
  ), { numRuns: RUNS, seed: Number(process.env.LOGICAL_SEED ?? 3434) })
  t.ok(matched > RUNS / 3, `${matched} of ${RUNS} filters match some documents`)
  t.ok(logical > RUNS / 2, `${logical} of ${RUNS} filters hold $or or $and`)
})

t.test('no branch leaves the project: a branch that matches everything still lists only ' +
  'the path\'s project', async (t) => {
  const res = await fastify.inject(`/projects/${String(project)}/activities` +
    `?filter=${encodeURIComponent(JSON.stringify({ $or: [{ name: 'nothing' }, {}] }))}&limit=0&count=true`)
  t.equal(res.json().total, documents.length)
  const nested = await fastify.inject(`/projects/${String(project)}/activities` +
    `?filter=${encodeURIComponent(JSON.stringify({ $and: [{ $or: [{}, { active: true }] }] }))}&limit=0&count=true`)
  t.equal(nested.json().total, documents.length)
})

t.test('a page with $or is one find, with the project outside the branches and the query time limit', async (t) => {
  // The project is remembered by now (the walks above): its page is a plain find.
  t.equal((await fastify.inject(`/projects/${String(project)}/activities?limit=1`)).statusCode, 200)
  const commands: Document[] = []
  fastify.mongo.client.on('commandStarted', (event) => {
    if (event.command.find === 'activities' || event.command.aggregate === 'activities') commands.push(event.command)
  })
  const res = await fastify.inject(`/projects/${String(project)}/activities` +
    `?filter=${encodeURIComponent(JSON.stringify({ $or: [{ name: 'Yoga' }, { tags: 'dance' }] }))}&limit=2`)
  t.equal(res.statusCode, 200)
  const finds = commands.filter((c) => c.find === 'activities')
  t.equal(finds.length, 1)
  t.equal(finds[0]?.maxTimeMS, fastify.config.QUERY_TIMEOUT_MS,
    'a scanning $or is bounded by QUERY_TIMEOUT_MS like any query')
  t.match(finds[0]?.filter, { project, $or: [{ name: { $eq: 'Yoga' } }, { tags: { $eq: 'dance' } }] },
    'the project is ANDed outside the branches')
})
