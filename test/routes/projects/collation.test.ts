// Lists in the reader's language (docs/query-language.md, "Language"): names with accents and
// case walked page by page under the default French collation and under `simple`, against an
// independent ICU collator (Intl.Collator) and against byte order; cursors of one collation
// refused under the other.
import fc from 'fast-check'
import { ObjectId } from 'mongodb'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../../helpers/build.js'
import { uniqueDatabaseName } from '../../helpers/database.js'

const SECRET = 'c'.repeat(32)
const MONGODB_DB = uniqueDatabaseName()
const french = await build(t, { config: { MONGODB_DB, CURSOR_SECRET: SECRET } })
const binary = await build(t, { config: { MONGODB_DB, CURSOR_SECRET: SECRET, COLLATION: 'simple' } })
const db = french.mongo.db as NonNullable<typeof french.mongo.db>

const FRENCH = new Intl.Collator('fr', { sensitivity: 'variant' })
/** MongoDB's binary order: the UTF-8 bytes. */
const bytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))

interface Named { _id: string, name?: string }

/** Every page of a list by `skip`, `limit` documents at a time. */
async function skipped (app: FastifyInstance, url: string, limit: number): Promise<Named[]> {
  const seen: Named[] = []
  for (let skip = 0; skip < 1000; skip += limit) {
    const res = await app.inject(`${url}&limit=${limit}&skip=${skip}`)
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    const { data } = res.json<{ data: Named[] }>()
    seen.push(...data)
    if (data.length < limit) return seen
  }
  throw new Error('endless walk')
}

/** Every page of a list, by `next`, `limit` documents at a time. */
async function walk (app: FastifyInstance, url: string, limit: number): Promise<Named[]> {
  const seen: Named[] = []
  let next: string | undefined
  for (let page = 0; page < 200; page++) {
    const res = await app.inject(`${url}&limit=${limit}` +
      `${next === undefined ? '' : `&after=${encodeURIComponent(next)}`}`)
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    const body = res.json<{ data: Named[], next?: string }>()
    seen.push(...body.data)
    if (body.next === undefined) return seen
    next = body.next
  }
  throw new Error('endless walk')
}

/** The expected order: the collator on names, missing names first (they sort as null), then `_id`. */
const ordered = (
  docs: Named[], compare: (a: string, b: string) => number, direction: 1 | -1
): string[] => [...docs].sort((a, b) => {
  const byName = a.name === undefined || b.name === undefined
    ? Number(a.name !== undefined) - Number(b.name !== undefined)
    : compare(a.name, b.name)
  return direction * byName || (a._id < b._id ? -1 : a._id > b._id ? 1 : 0)
}).map((d) => d._id)

// Letters where French and byte order part: case, accents, ligatures, spaces and hyphens.
const letter = fc.constantFrom('a', 'A', 'à', 'â', 'e', 'E', 'é', 'É', 'è', 'ê', 'ë', 'z', 'Z', 'ç', 'Ç',
  'œ', 'o', 'ô', ' ', '-', "'", '’', 'l', 'L', 'i', 'î', 'ï', '1', '9', '10')
// A few names often, so that ties (broken by `_id`) fall across pages.
const name = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: letter, minLength: 1, maxLength: 6 }) },
  { weight: 3, arbitrary: fc.constantFrom('Léa', 'Lea', 'léa', "d'Arc", 'Darc', 'Room 9', 'Room 10') },
  { weight: 1, arbitrary: fc.constant(undefined) }
)

t.test('walked with next and with skip, names are in ICU French order (default) ' +
  'and in byte order (simple)', async (t) => {
  let runs = 0
  await fc.assert(fc.asyncProperty(fc.array(name, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 7 }),
    fc.constantFrom<1 | -1>(1, -1), async (names, limit, direction) => {
      const project = new ObjectId()
      await db.collection('projects').insertOne({ _id: project, name: 'collation' })
      const docs = names.map((n) => ({ _id: new ObjectId(), project, ...(n === undefined ? {} : { name: n }) }))
      await db.collection('stewards').insertMany(docs)
      const expected = docs.map((d) =>
        ({ _id: d._id.toHexString(), ...(d.name === undefined ? {} : { name: d.name }) }))
      const url = `/projects/${project.toHexString()}/stewards?sort=${direction === 1 ? '%2B' : '-'}name&fields=name`
      const inFrench = JSON.stringify(ordered(expected, FRENCH.compare, direction))
      const inBytes = JSON.stringify(ordered(expected, bytes, direction))
      const ids = (docs: Named[]): string => JSON.stringify(docs.map((d) => d._id))
      runs++
      return ids(await walk(french, url, limit)) === inFrench && ids(await skipped(french, url, limit)) === inFrench &&
        ids(await walk(binary, url, limit)) === inBytes && ids(await skipped(binary, url, limit)) === inBytes
    }), { numRuns: 40 })
  t.equal(runs, 40, 'every walk compared')
})

t.test('the demo people, in the order a French reader expects', async (t) => {
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'Festival' })
  const people = ['Zoé', 'Émile', 'elodie', 'Élodie', 'de la Tour', 'Chloé', 'Inès', 'Léa', 'zoe']
  await db.collection('stewards').insertMany(people.map((n) => ({ project, name: n })))
  const names = async (app: FastifyInstance, query: string): Promise<string[]> =>
    (await app.inject(`/projects/${project.toHexString()}/stewards?${query}`)).json<{ data: Named[] }>().data
      .map((d) => d.name as string)
  t.same(await names(french, 'sort=%2Bname'),
    ['Chloé', 'de la Tour', 'elodie', 'Élodie', 'Émile', 'Inès', 'Léa', 'zoe', 'Zoé'])
  t.same(await names(binary, 'sort=%2Bname'),
    ['Chloé', 'Inès', 'Léa', 'Zoé', 'de la Tour', 'elodie', 'zoe', 'Élodie', 'Émile'])
  const range = `sort=%2Bname&filter=${encodeURIComponent('{"name":{"$gte":"e","$lt":"f"}}')}`
  t.same(await names(french, range), ['elodie', 'Élodie', 'Émile'], 'a range on strings follows the collation')
  t.same(await names(binary, range), ['elodie'])
  t.same(await names(french, `filter=${encodeURIComponent('{"name":"zoe"}')}`), ['zoe'],
    'equality stays exact at strength 3')
  t.same(await names(french, `filter=${encodeURIComponent('{"name":{"$in":["émile","Léa"]}}')}`), ['Léa'], '$in too')
  t.same(await names(french, `sort=%2Bname&filter=${encodeURIComponent('{"name":{"$regex":"^é","$options":"i"}}')}`),
    ['Élodie', 'Émile'], '$regex ignores the collation')
  const counted = await french.inject(`/projects/${project.toHexString()}/stewards?limit=0&count=true` +
    `&filter=${encodeURIComponent('{"name":{"$gt":"d"}}')}`)
  t.equal(counted.json<{ total: number }>().total, 8, 'count=true counts in the collation')
})

t.test('a cursor of one collation is CURSOR_MISMATCH in another, both ways', async (t) => {
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'Cursors' })
  await db.collection('stewards').insertMany(['b', 'A', 'c', 'D'].map((n) => ({ project, name: n })))
  const url = `/projects/${project.toHexString()}/stewards?sort=%2Bname&limit=2`
  for (const [from, to] of [[french, binary], [binary, french]] as const) {
    const { next } = (await from.inject(url)).json<{ next: string }>()
    t.equal((await from.inject(`${url}&after=${encodeURIComponent(next)}`)).statusCode, 200, 'read where it was issued')
    const res = await to.inject(`${url}&after=${encodeURIComponent(next)}`)
    t.equal(res.statusCode, 400)
    t.match(res.json(),
      { code: 'CURSOR_MISMATCH', errors: [{ param: 'after', code: 'CURSOR_MISMATCH' }], detail: /collation/ })
  }
})
