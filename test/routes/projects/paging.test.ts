// Paging for programs (docs/paging.md): walking with `next` gives exactly what one
// unpaged request gives, for any sort, including missing values and custom fields holding
// different BSON types; cursors are signed and bound to their query; `fields` reads only what
// is asked; `limit=0` reads no document.
import fc from 'fast-check'
import { BSON, Decimal128, Int32, ObjectId, type Document } from 'mongodb'
import t from 'tap'
import { CursorCodec } from '../../../list-endpoint/cursor.js'
import { watchCommands } from '../../helpers/commands.js'
import { buildWithDemoData, projectIds } from '../../helpers/demo-app.js'

const fastify = await buildWithDemoData(t)
const { publicIds } = await projectIds(fastify)
const first = publicIds[0] as string
const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>

interface Body { data: Document[], next?: string, total?: number, limit: number }

async function page (url: string): Promise<{ body: Body, link?: string }> {
  const res = await fastify.inject(url)
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
  return { body: res.json(), link: res.headers.link as string | undefined }
}

/** Every page of a listing, following `next`; the ids in order. */
async function walk (base: string, limit: number): Promise<string[]> {
  const ids: string[] = []
  let url = `${base}${base.includes('?') ? '&' : '?'}limit=${limit}`
  for (let pages = 0; pages < 2000; pages++) {
    const { body, link } = await page(url)
    ids.push(...body.data.map((d) => d._id as string))
    if (body.next === undefined) {
      if (link !== undefined) throw new Error('a Link header without next')
      return ids
    }
    if (body.data.length !== limit) throw new Error('a page before the last is short')
    const target = /^<([^>]+)>; rel="next"$/.exec(link ?? '')?.[1]
    if (target === undefined) throw new Error(`no Link header: ${String(link)}`)
    url = target.replace(/^http:\/\/[^/]+/, '')
  }
  throw new Error('too many pages')
}

async function all (base: string): Promise<string[]> {
  return (await page(`${base}${base.includes('?') ? '&' : '?'}limit=1000`)).body.data.map((d) => d._id as string)
}

t.test('walking with next equals the unpaged list, for several sorts, on the demo data', async (t) => {
  const sessions = `/projects/${first}/sessions`
  for (const sort of ['', 'sort=%2Bstart', 'sort=-end,%2Bname', 'sort=-activity',
    `filter=${encodeURIComponent('{"start":{"$gte":"2024"}}')}&sort=%2Bname`]) {
    const base = sort === '' ? sessions : `${sessions}?${sort}`
    const expected = await all(base)
    t.same(await walk(base, 37), expected, `${sort || 'default sort'}: same documents, same order`)
  }
  const registrations = `/projects/${first}/registrations?sort=-createdAt`
  t.same(await walk(registrations, 100), await all(registrations),
    'an exact multiple of the page size ends without an empty page')
})

t.test('the Link header is the same URL with after, without skip', async (t) => {
  const { body, link } = await page(`/projects/${first}/sessions?sort=-start&skip=5&limit=3&count=true`)
  t.ok(body.next)
  t.equal(link, `<http://localhost:80/projects/${first}/sessions?sort=-start&limit=3&count=true` +
    `&after=${body.next as string}>; rel="next"`)
  const after = await page(`/projects/${first}/sessions?sort=-start&limit=3&after=${body.next as string}`)
  const bySkip = await page(`/projects/${first}/sessions?sort=-start&skip=8&limit=3`)
  t.same(after.body.data, bySkip.body.data, 'after gives what skip would give next')
  const counted = await page(`/projects/${first}/sessions?sort=-start&limit=5&count=true&after=${body.next as string}`)
  t.equal(counted.body.total, body.total, 'total counts all matches, also after a cursor; limit may change')
})

// Random data with missing values and custom fields of every type, random sorts and page sizes.
const customValues = fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer({ min: -3, max: 3 }),
  fc.double({ min: -3, max: 3, noNaN: true }), fc.constantFrom('a', 'b', 'B', ''), fc.boolean(),
  fc.constantFrom(new Date('2024-01-01'), new Date('2023-01-01')),
  fc.constant(new ObjectId('665f1c2e9b1d4a3f5c7e8a90')), fc.constant(new Decimal128('2.5')))
const docArbitrary = fc.record({
  name: fc.option(fc.constantFrom('Yoga', 'Salsa', 'yoga', 'Dance'), { nil: undefined }),
  createdAt: fc.option(fc.constantFrom(new Date('2024-01-01'), new Date('2024-06-01')), { nil: undefined }),
  active: fc.option(fc.boolean(), { nil: undefined }),
  level: customValues,
  other: customValues
})
const SORTABLE = ['name', 'createdAt', 'active', 'customFields.level', 'customFields.other', 'category', '_id']
const FILTERS = ['', `filter=${encodeURIComponent('{"active":true}')}`,
  `filter=${encodeURIComponent('{"customFields.level":{"$exists":true}}')}`,
  `filter=${encodeURIComponent('{"name":{"$ne":"Yoga"}}')}`]

t.test('property: the concatenation of all pages is the unpaged result, ' +
  'whatever the data, filter, sort and page size', async (t) => {
  let run = 0
  await t.resolves(fc.assert(fc.asyncProperty(
    fc.array(docArbitrary, { minLength: 0, maxLength: 25 }),
    fc.uniqueArray(fc.constantFrom(...SORTABLE), { minLength: 1, maxLength: 3 }),
    fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    fc.integer({ min: 1, max: 7 }),
    fc.constantFrom(...FILTERS),
    async (docs, keys, descending, size, filter) => {
      const project = new ObjectId()
      await db.collection('projects').insertOne({ _id: project, name: `property ${run++}` })
      if (docs.length > 0) {
        await db.collection('activities').insertMany(docs.map(({ level, other, ...fields }) => {
          const customFields: Document = {}
          if (level !== undefined) customFields.level = level
          if (other !== undefined) customFields.other = other
          return {
            ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)), project, customFields
          }
        }))
      }
      const sort = `sort=${keys.map((key, i) => `${descending[i] === true ? '-' : '%2B'}${key}`).join(',')}`
      const base = `/projects/${String(project)}/activities?${[filter, sort].filter((p) => p !== '').join('&')}`
      const expected = await all(base)
      const walked = await walk(base, size)
      return new Set(walked).size === walked.length && JSON.stringify(walked) === JSON.stringify(expected)
    }
  ), { numRuns: 60, seed: 15 }), '60 random listings walked exactly')
})

// Arrays stored where a scalar is declared (other services write to the collections): MongoDB
// sorts one by its smallest element ascending, its largest descending, an empty one before null.
const element = fc.oneof(fc.constant(null), fc.integer({ min: -2, max: 2 }), fc.constantFrom('a', 'b', 'B', 'é', 'E'),
  fc.boolean(), fc.constant(new Date('2024-01-01')))
const arrayOrValue = fc.oneof(fc.constant(undefined), element, fc.array(element, { maxLength: 3 }))

t.test('property: sort keys holding arrays page exactly too: no duplicate, no gap', async (t) => {
  let run = 0
  await t.resolves(fc.assert(fc.asyncProperty(
    fc.array(fc.record({ name: arrayOrValue, level: arrayOrValue }), { minLength: 1, maxLength: 20 }),
    fc.uniqueArray(fc.constantFrom('name', 'customFields.level', '_id'), { minLength: 1, maxLength: 2 }),
    fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }),
    fc.integer({ min: 1, max: 4 }),
    async (docs, keys, descending, size) => {
      const project = new ObjectId()
      await db.collection('projects').insertOne({ _id: project, name: `arrays ${run++}` })
      await db.collection('stewards').insertMany(docs.map(({ name, level }) => ({
        project, ...(name === undefined ? {} : { name }), customFields: level === undefined ? {} : { level }
      })))
      const base = `/projects/${String(project)}/stewards?` +
        `sort=${keys.map((key, i) => `${descending[i] === true ? '-' : '%2B'}${key}`).join(',')}`
      const expected = await all(base)
      const walked = await walk(base, size)
      return new Set(walked).size === walked.length && JSON.stringify(walked) === JSON.stringify(expected)
    }
  ), { numRuns: 80, seed: 23 }), '80 random listings with arrays walked exactly')
})

t.test('a walk goes on over long sort values: the service reads back the cursors it writes', async (t) => {
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'long names' })
  await db.collection('sessions').insertMany(['x'.repeat(3000), 'y'.repeat(9000), 'z']
    .map((name) => ({ project, name })))
  const base = `/projects/${String(project)}/sessions?sort=%2Bname&fields=name`
  const walked = await walk(base, 1)
  t.same(walked, await all(base), 'every document, once, in order')
  t.equal(walked.length, 3)
})

t.test('cursors are signed and bound to their query', async (t) => {
  const base = `/projects/${first}/sessions?sort=%2Bname&fields=name,start&limit=2`
  const { body } = await page(base)
  const cursor = body.next as string
  const problem = async (url: string, code: string, detail?: RegExp) => {
    const res = await fastify.inject(url)
    t.equal(res.statusCode, 400, url)
    t.match(res.json(), { code, errors: [{ param: 'after', code }], ...(detail === undefined ? {} : { detail }) }, url)
  }
  const [payload, signature] = cursor.split('.') as [string, string]
  const flipped = `${payload.slice(0, 5)}${payload[5] === 'A' ? 'B' : 'A'}${payload.slice(6)}.${signature}`
  await problem(`${base}&after=${flipped}`, 'INVALID_CURSOR')
  await problem(`${base}&after=${cursor.slice(0, -3)}`, 'INVALID_CURSOR')
  await problem(`${base}&after=not-a-cursor`, 'INVALID_CURSOR')
  await problem(`${base}&after=${cursor}&skip=2`, 'INVALID_CURSOR')
  const otherKey = new CursorCodec([Buffer.alloc(32, 7)])
  const forged = otherKey.encode({ path: 'x', filter: 'x', sort: 'x', fields: 'x' }, ['Zumba', new ObjectId()])
  await problem(`${base}&after=${forged}`, 'INVALID_CURSOR')
  await problem(`/projects/${first}/sessions?sort=-name&fields=name,start&limit=2&after=${cursor}`,
    'CURSOR_MISMATCH', /sort/)
  await problem(`/projects/${first}/sessions?sort=%2Bname&fields=name&limit=2&after=${cursor}`,
    'CURSOR_MISMATCH', /fields/)
  await problem(`/projects/${first}/sessions?sort=%2Bname&fields=name,start&limit=2&filter[name]=x&after=${cursor}`,
    'CURSOR_MISMATCH', /filter/)
  await problem(`/projects/${publicIds[1] as string}/sessions?sort=%2Bname&fields=name,start&limit=2&after=${cursor}`,
    'CURSOR_MISMATCH', /path/)
  await problem(
    `/projects/${first}/activities?sort=%2Bname&fields=name&limit=2` +
    `&after=${(await page(`/projects/${first}/sessions?sort=%2Bname&fields=name&limit=2`)).body.next as string}`,
    'CURSOR_MISMATCH', /path/
  )
  t.equal((await fastify.inject(`/projects/${first}/sessions?sort=%2Bname&fields=start,name&limit=9&count=true` +
    `&after=${cursor}`)).statusCode, 200, 'limit, count and the order of fields may change')
  // The same query string on two projects, in turn: each page's cursor is bound to its own project.
  const second = publicIds[1] as string
  for (const [project, other] of [[first, second], [second, first], [first, second]] as Array<[string, string]>) {
    const next = (await page(`/projects/${project}/sessions?sort=%2Bname&limit=1`)).body.next as string
    t.equal((await fastify.inject(`/projects/${project}/sessions?sort=%2Bname&limit=1&after=${next}`)).statusCode, 200,
      'continues its own project')
    await problem(`/projects/${other}/sessions?sort=%2Bname&limit=1&after=${next}`, 'CURSOR_MISMATCH', /path/)
  }
})

t.test('a cursor carries no value of a field the kind does not declare', async (t) => {
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'secrets' })
  await db.collection('registrations').insertMany([1, 2, 3].map((i) => ({
    project, name: `r${i}`, password: `hunter2-secret-${i}`, customFields: { vip: i }
  })))
  const { body } = await page(`/projects/${String(project)}/registrations?sort=-customFields.vip&limit=1`)
  const payload = Buffer.from((body.next as string).split('.')[0] as string, 'base64url')
  t.notMatch(payload.toString('latin1'), /hunter2/)
  // After the version byte and four 8-byte digests, the values as one BSON document.
  const values = Object.values(BSON.deserialize(payload.subarray(33), { promoteValues: false }))
  t.equal(values.length, 2, 'only the sort keys (here customFields.vip and _id)')
  t.same([values[0], String(values[1])], [new Int32(3), String(body.data[0]?._id)])
})

t.test('fields: only _id and the fields asked for, and only they (and sort keys) are read', async (t) => {
  watchCommands(fastify)
  const { body } = await page(`/projects/${first}/sessions?fields=name,customFields.room&sort=-end&limit=3`)
  t.ok(body.data.every((d) => Object.keys(d).every((k) => ['_id', 'name', 'customFields'].includes(k))),
    'nothing else is returned')
  t.ok(body.data.every((d) => d.end === undefined), 'the sort key read for the cursor is not returned')
  const finds: Document[] = []
  fastify.mongo.client.on('commandStarted', (event) => {
    if (event.commandName === 'find' && event.command.find === 'sessions') finds.push(event.command)
  })
  const named = await page(`/projects/${first}/sessions?fields=name&sort=-end&limit=3`)
  t.same(finds[0]?.projection, { _id: 1, name: 1, end: 1 },
    'the projection sent to MongoDB: _id, the field, and the sort key')
  const next = await page(`/projects/${first}/sessions?fields=name&sort=-end&limit=3` +
    `&after=${named.body.next as string}`)
  const bySkip = await page(`/projects/${first}/sessions?fields=name&sort=-end&limit=3&skip=3`)
  t.same(next.body.data, bySkip.body.data, 'a cursor works with fields that leave out its sort key')
})

t.test('limit=0 is a count-only page: no document is read', async (t) => {
  watchCommands(fastify)
  const { body, link } = await page(`/projects/${first}/sessions?limit=0&count=true`)
  t.same(body.data, [])
  t.equal(body.limit, 0)
  t.equal(body.total, 300)
  t.equal(body.next, undefined)
  t.equal(link, undefined)
  const events: Document[] = []
  fastify.mongo.client.on('commandStarted', (event) => {
    events.push({ name: event.commandName, collection: event.command[event.commandName] })
  })
  await page(`/projects/${first}/sessions?limit=0&count=true`)
  t.notOk(events.some((e) => e.name === 'find' && e.collection === 'sessions'), 'no find on the listed collection')
})

t.test('_id takes range operators', async (t) => {
  const ids = await all(`/projects/${first}/categories`)
  const middle = ids[3] as string
  const { body } = await page(`/projects/${first}/categories` +
    `?filter=${encodeURIComponent(JSON.stringify({ _id: { $gt: middle } }))}`)
  t.same(body.data.map((d) => d._id), ids.slice(4))
})

t.test('a page the server cuts short (a batch holds at most 16 MiB) is still whole, ' +
  'and the cursor left open is killed', async (t) => {
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'Big sessions', public: true })
  const name = 'x'.repeat(7 * 1024 * 1024)
  const ids = Array.from({ length: 4 }, () => new ObjectId())
  await db.collection('sessions').insertMany(ids.map((_id) => ({ _id, project, name })))
  t.teardown(async () => {
    await db.collection('sessions').deleteMany({ project })
    await db.collection('projects').deleteOne({ _id: project })
  })
  const commands = watchCommands(fastify)
  const { body } = await page(`/projects/${String(project)}/sessions?limit=2&fields=name`)
  t.same(body.data.map((d) => d._id), ids.slice(0, 2).map(String),
    'the first two, although the first batch of three held two')
  t.ok(body.data.every((d) => d.name === name))
  t.type(body.next, 'string', 'and a next page, known from the third')
  t.same(commands.names().filter((n) => n !== 'find').sort(), ['aggregate', 'getMore', 'killCursors', 'killCursors'],
    'a project not remembered: the aggregate\'s open cursor is killed, and so is the find\'s; ' +
    'the page is read again through a driver cursor')
  const warm = await page(`/projects/${String(project)}/sessions?limit=2&fields=name`)
  t.same(warm.body.data.map((d) => d._id), ids.slice(0, 2).map(String), 'the same page when the project is remembered')
  t.same(commands.names().filter((n) => n !== 'find').sort(), ['getMore', 'killCursors'],
    'the open cursor is killed; the page is read again through a driver cursor')
  const rest = await page(`/projects/${String(project)}/sessions?limit=2&fields=name&after=${body.next as string}`)
  t.same(rest.body.data.map((d) => d._id), ids.slice(2).map(String))
  t.equal(rest.body.next, undefined)
})
