// Counts per group (docs/counts.md) as a property: for random documents, filters and keys, every
// answer equals counting the list itself, walked to its end with the same filter: an array per
// element, a date by its UTC period, no value as null; by descending count, then ascending value
// in the service's collation; `total` the list's total, `more` when groups were left out.
import fc from 'fast-check'
import { Decimal128, Int32, Long, ObjectId, type Document } from 'mongodb'
import t from 'tap'
import { groupsOf } from '../../counts/count-pipeline.js'
import { build } from '../helpers/build.js'

const RUNS = Number(process.env.COUNTS_RUNS ?? 60)
const fastify = await build(t)
const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
const FRENCH = new Intl.Collator('fr', { sensitivity: 'variant' })

const project = new ObjectId()
const other = new ObjectId()
const ROLES = ['bénévole', 'Bénévole', 'artiste', 'Artiste', 'élève', 'zèbre', 'organisateur']
const SESSIONS = Array.from({ length: 4 }, (_, i) => new ObjectId(`665f1c2e9b1d4a3f5c7e8a0${i}`))
const day = fc.integer({ min: Date.UTC(2023, 11, 30), max: Date.UTC(2024, 2, 2) }).map((ms) => new Date(ms))
const registration = fc.record({
  role: fc.option(fc.constantFrom(...ROLES), { nil: undefined }),
  createdAt: fc.option(day, { nil: undefined }),
  sessionsSubscriptions: fc.option(fc.array(fc.record({
    session: fc.constantFrom(...SESSIONS), subscribedAt: day
  }), { maxLength: 3 }), { nil: undefined }),
  customFields: fc.option(fc.record({
    level: fc.oneof(fc.constantFrom('a', 'B', 'é'), fc.integer({ min: 1, max: 3 }), fc.boolean())
  }, { requiredKeys: [] }), { nil: undefined })
}, { requiredKeys: [] })
const documents = fc.sample(registration, { numRuns: 120, seed: 47 })
await db.collection('projects').insertMany([{ _id: project, name: 'counts' }, { _id: other, name: 'elsewhere' }])
await db.collection('registrations').insertMany(documents.map((d, i) => ({
  project: i % 10 === 0 ? other : project, ...d
})))

type Kind = 'string' | 'ref' | 'date' | 'custom'
const KEYS: Array<{ by: string, kind: Kind, values: (doc: Document) => unknown[] }> = [
  { by: 'role', kind: 'string', values: (d) => [d.role] },
  { by: 'createdAt:day', kind: 'date', values: (d) => [period(d.createdAt, 'day')] },
  { by: 'createdAt:month', kind: 'date', values: (d) => [period(d.createdAt, 'month')] },
  { by: 'createdAt:year', kind: 'date', values: (d) => [period(d.createdAt, 'year')] },
  { by: 'sessionsSubscriptions.session', kind: 'ref', values: (d) => elements(d).map((s) => s.session) },
  {
    by: 'sessionsSubscriptions.subscribedAt:month',
    kind: 'date',
    values: (d) => elements(d).map((s) => period(s.subscribedAt, 'month'))
  },
  { by: 'customFields.level', kind: 'custom', values: (d) => [(d.customFields as Document | undefined)?.level] }
]
const FILTERS: Document[] = [
  {}, { role: { $gte: 'b' } }, { createdAt: { $gte: '2024-01-15' } }, { 'customFields.level': { $exists: true } },
  { $or: [{ role: 'artiste' }, { 'sessionsSubscriptions.session': SESSIONS[0]?.toHexString() }] }
]

/** A list's value of a date, cut to the start of its UTC period, as the list writes dates. */
function period (iso: unknown, unit: 'day' | 'month' | 'year'): string | undefined {
  if (typeof iso !== 'string') return undefined
  const d = new Date(iso)
  const start = unit === 'year'
    ? Date.UTC(d.getUTCFullYear(), 0, 1)
    : unit === 'month'
      ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
      : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
  return new Date(start).toISOString()
}

/** An array's elements, each counted; none (a missing or empty array) counts once as no value. */
function elements (d: Document): Document[] {
  const list = d.sessionsSubscriptions as Document[] | undefined
  return list === undefined || list.length === 0 ? [{}] : list
}

/**
 * MongoDB's order of the values of one key: null, numbers,
 * strings (in the collation), booleans; ids and dates as written.
 */
function ascending (kind: Kind): (a: unknown, b: unknown) => number {
  const rank = (v: unknown): number => v === null ? 0 : typeof v === 'number' ? 1 : typeof v === 'string' ? 2 : 3
  return (a, b) => {
    if (rank(a) !== rank(b)) return rank(a) - rank(b)
    if (typeof a === 'number') return a - (b as number)
    if (typeof a === 'boolean') return Number(a) - Number(b)
    if (typeof a !== 'string') return 0
    return kind === 'string' || kind === 'custom'
      ? FRENCH.compare(a, b as string)
      : a < (b as string) ? -1 : a > (b as string) ? 1 : 0
  }
}

async function walk (query: string): Promise<{ documents: Document[], total: number }> {
  const res = await fastify.inject(`/projects/${project.toHexString()}/registrations?${query}&limit=1000&count=true`)
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
  const body = res.json<{ data: Document[], total: number, next?: string }>()
  if (body.next !== undefined) throw new Error('more than one page')
  return { documents: body.data, total: body.total }
}

t.test('every count per group equals counting the walked list', async (t) => {
  let grouped = 0
  await fc.assert(fc.asyncProperty(fc.constantFrom(...KEYS), fc.constantFrom(...FILTERS),
    fc.integer({ min: 1, max: 8 }), async (key, filter, limit) => {
      const query = Object.keys(filter).length === 0 ? '' : `filter=${encodeURIComponent(JSON.stringify(filter))}`
      const { documents: listed, total } = await walk(query)
      const counted = new Map<string, { value: unknown, count: number }>()
      for (const document of listed) {
        for (const raw of key.values(document)) {
          const value = raw ?? null
          const text = JSON.stringify(value)
          const group = counted.get(text) ?? { value, count: 0 }
          group.count++
          counted.set(text, group)
        }
      }
      const order = ascending(key.kind)
      const expected = [...counted.values()].sort((a, b) => b.count - a.count || order(a.value, b.value))
      const res = await fastify.inject(`/projects/${project.toHexString()}/registrations/counts` +
        `?by=${encodeURIComponent(key.by)}&limit=${limit}${query === '' ? '' : `&${query}`}`)
      if (res.statusCode !== 200) throw new Error(`${key.by} ${JSON.stringify(filter)}: ${res.statusCode} ${res.body}`)
      const answer = res.json<{ groups: Array<{ value: unknown, count: number }>, total: number, more: boolean }>()
      grouped += answer.groups.length
      t.same(answer, { groups: expected.slice(0, limit), total, more: expected.length > limit },
        `${key.by}, ${JSON.stringify(filter)}, limit ${limit}`)
    }), { numRuns: RUNS, seed: Number(process.env.COUNTS_SEED ?? 4711) })
  t.ok(grouped > RUNS, `${grouped} groups compared`)
})

t.test('refusals: INVALID_GROUP names the groupable paths; the list\'s rules hold', async (t) => {
  const ask = async (query: string) =>
    await fastify.inject(`/projects/${project.toHexString()}/registrations/counts?${query}`)
  for (const by of [
    '', 'sessionsSubscriptions', 'createdAt', 'role:day', 'project', '_id', 'user.name', 'createdAt:week',
    'customFields', 'nmae'
  ]) {
    const res = await ask(`by=${encodeURIComponent(by)}`)
    t.equal(res.statusCode, 400, by)
    t.match(res.json(), {
      code: 'INVALID_GROUP',
      errors: [{ param: 'by', pointer: '' }],
      detail: /sessionsSubscriptions\.session, .*customFields\.<name>/
    })
  }
  const misspelt = [
    ['rol', 'role'], ['ROLE', 'role'], ['sessionsSubscriptions.sesion', 'sessionsSubscriptions.session']
  ]
  for (const [by, meant] of misspelt) {
    t.match((await ask(`by=${by}`)).json().detail, `'${by}' cannot be grouped by (did you mean '${meant}'?)`, by)
  }
  t.notMatch((await ask('by=zzzzzzzz')).json().detail, /did you mean/, 'no guess when nothing is near')
  t.match((await ask('filter={"role":"x"}')).json(), { code: 'INVALID_GROUP', detail: /by is required/ })
  t.match((await ask('by=role&limit=0')).json(), { code: 'INVALID_LIMIT' })
  t.match((await ask('by=role&sort=%2Brole')).json(), { code: 'UNKNOWN_PARAMETER', errors: [{ param: 'sort' }] })
  t.match((await ask('by=role&by=user')).json(), { code: 'DUPLICATE_PARAMETER' })
  t.match((await ask('by=role&filter={"nmae":1}')).json(), { code: 'UNKNOWN_FIELD', errors: [{ pointer: '/nmae' }] })
  t.match((await ask('by=role&filter={"project":"665f1c2e9b1d4a3f5c7e8a90"}')).json(), { code: 'SCOPE_FIELD' })
  const unknown = await fastify.inject(`/projects/${new ObjectId().toHexString()}/registrations/counts?by=role`)
  t.equal(unknown.statusCode, 404)
  t.equal((await fastify.inject({
    method: 'POST', url: `/projects/${project.toHexString()}/registrations/counts?by=role`
  })).statusCode, 405)
  t.equal((await fastify.inject({
    method: 'HEAD', url: `/projects/${project.toHexString()}/registrations/counts?by=role`
  })).statusCode, 200)
})

t.test('only the path\'s project is counted, and /projects counts the projects', async (t) => {
  const inOther = documents.filter((_, i) => i % 10 === 0).length
  const res = await fastify.inject(`/projects/${other.toHexString()}/registrations/counts?by=role`)
  t.equal(res.json<{ total: number }>().total, inOther)
  const projects = await fastify.inject('/projects/counts?by=name&filter={"name":{"$in":["counts","elsewhere"]}}')
  t.same(projects.json(),
    { groups: [{ value: 'counts', count: 1 }, { value: 'elsewhere', count: 1 }], total: 2, more: false })
})

t.test('a group without its count came damaged: MalformedBson (a 503), ' +
  'never a count the serializer refuses', async (t) => {
  t.strictSame(groupsOf([{ _id: 'a', count: 2 }, { _id: null, count: 1 }], 5),
    { groups: [{ value: 'a', count: 2 }, { value: null, count: 1 }], more: false })
  for (const count of [undefined, 'two', 0, 1.5, Number.NaN]) {
    t.throws(() => groupsOf([{ _id: 'a', count }], 5), { name: 'MalformedBson' }, String(count))
  }
})

t.test('a value the list leaves out (off-schema) is counted as no value, never as a group of its own', async (t) => {
  const p = new ObjectId()
  const session = new ObjectId()
  await db.collection('projects').insertOne({ _id: p, name: 'off-schema' })
  await db.collection('activities').insertMany([
    { project: p, tags: ['yoga'] }, { project: p, tags: 'yoga' }, { project: p, tags: [5, 'yoga'] },
    { project: p, tags: [] }
  ])
  await db.collection('places').insertMany([10, Number.NaN, Infinity, -Infinity, '10']
    .map((maxNumberOfParticipants) => ({ project: p, maxNumberOfParticipants })))
  await db.collection('sessions').insertMany([{ project: p, places: [session] }, { project: p, places: session }])
  await db.collection('registrations').insertMany([
    { project: p, sessionsSubscriptions: [{ session }] }, { project: p, sessionsSubscriptions: { session } },
    { project: p, sessionsSubscriptions: [{ session: session.toHexString() }] }
  ])
  const counts = async (list: string, by: string): Promise<unknown> =>
    (await fastify.inject(`/projects/${p.toHexString()}/${list}/counts?by=${by}`)).json()
  const id = session.toHexString()
  t.same(await counts('activities', 'tags'), {
    groups: [{ value: null, count: 3 }, { value: 'yoga', count: 1 }], total: 4, more: false
  }, 'a string where an array is declared, an element of another type')
  t.same(await counts('places', 'maxNumberOfParticipants'), {
    groups: [{ value: null, count: 4 }, { value: 10, count: 1 }], total: 5, more: false
  }, 'numbers that are not finite, a string')
  t.same(await counts('sessions', 'places'), {
    groups: [{ value: null, count: 1 }, { value: id, count: 1 }], total: 2, more: false
  }, 'one id where an array is declared')
  t.same(await counts('registrations', 'sessionsSubscriptions.session'), {
    groups: [{ value: null, count: 2 }, { value: id, count: 1 }], total: 3, more: false
  }, 'one subscription where an array is declared, a session that is not an id')
  // What the lists say of the same documents: the values counted as none are not in them.
  const tags = (await fastify.inject(`/projects/${p.toHexString()}/activities?fields=tags`))
    .json<{ data: Document[] }>().data
  t.same(tags.map((d) => d.tags), [['yoga'], undefined, undefined, []])
})

t.test('a number counts as itself only where the list writes it as a JSON number: an Int64 within ±2^53, ' +
  'never a Decimal128 or a rounded Int64', async (t) => {
  const p = new ObjectId()
  await db.collection('projects').insertOne({ _id: p, name: 'wide numbers' })
  const beyond = Long.fromBigInt(2n ** 53n + 1n)
  const values = [
    10, new Int32(10), Long.fromNumber(10), Long.fromBigInt(2n ** 53n), Long.fromBigInt(-(2n ** 53n)), beyond,
    Long.fromBigInt(-(2n ** 53n) - 1n), Decimal128.fromString('10'), 1e300
  ]
  await db.collection('places').insertMany(values.map((value) => ({
    project: p, maxNumberOfParticipants: value, customFields: { size: value }
  })))
  const path = `/projects/${p.toHexString()}/places`
  const expected = {
    groups: [{ value: null, count: 3 }, { value: 10, count: 3 }, { value: -(2 ** 53), count: 1 },
      { value: 2 ** 53, count: 1 }, { value: 1e300, count: 1 }],
    total: 9,
    more: false
  }
  t.same((await fastify.inject(`${path}/counts?by=maxNumberOfParticipants`)).json(), expected, 'a declared number')
  t.same((await fastify.inject(`${path}/counts?by=customFields.size`)).json(), expected, 'in customFields')
  // The list: the declared field leaves out what it cannot write as a number; customFields
  // gives the exact value in Extended JSON, which a JSON number would round.
  const listed = (await fastify.inject(`${path}?sort=%2B_id`)).json<{ data: Document[] }>().data
  t.same(listed.map((d) => d.maxNumberOfParticipants),
    [10, 10, 10, 2 ** 53, -(2 ** 53), undefined, undefined, undefined, 1e300])
  const sizes = [
    10, 10, 10, 2 ** 53, -(2 ** 53), { $numberLong: '9007199254740993' }, { $numberLong: '-9007199254740993' },
    { $numberDecimal: '10' }, 1e300
  ]
  t.same(listed.map((d) => d.customFields.size), sizes)
  // A nested path read only for the cursor is cut out of decoded documents: the other writer.
  const decoded = (await fastify.inject(`${path}?fields=customFields.size&sort=%2BcustomFields.unset`))
    .json<{ data: Document[] }>().data
  t.same(decoded.map((d) => d.customFields), sizes.map((size) => ({ size })))
})
