// The seven nested lists, end to end on the demo data: scope, path errors, every field type's
// filter, sort with missing values, pagination without overlap or gap, count, and no leaks.
import t from 'tap'
import { ObjectId } from 'mongodb'
import { buildWithDemoData, list, projectIds, q } from '../../helpers/demo-app.js'
import { NESTED_LISTS } from '../../helpers/lists.js'

const fastify = await buildWithDemoData(t)
const { publicIds, privateIds } = await projectIds(fastify)
const [first, second] = publicIds as [string, string]
const COLLECTIONS = NESTED_LISTS
const PER_PROJECT: Record<string, number> = {
  categories: 8, activities: 60, places: 20, sessions: 300, stewards: 40, teams: 10, registrations: 1000
}

for (const collection of COLLECTIONS) {
  t.test(`/projects/:projectId/${collection}`, async (t) => {
    t.test('lists only the path project\'s documents, with the total', async (t) => {
      for (const projectId of [first, second, privateIds[0]]) {
        const page = await list(fastify, `/projects/${projectId}/${collection}?limit=1000&count=true`)
        t.equal(page.total, PER_PROJECT[collection])
        t.equal(page.data.length, PER_PROJECT[collection])
        t.ok(page.data.every((d) => d.project === projectId), 'every document belongs to the project')
      }
    })

    t.test('a filter naming another project is refused (SCOPE_FIELD)', async (t) => {
      const res = await fastify.inject(`/projects/${first}/${collection}?${q({ project: second })}`)
      t.equal(res.statusCode, 400)
      t.match(res.json(), { code: 'SCOPE_FIELD', errors: [{ pointer: '/project' }] })
      const bracket = await fastify.inject(`/projects/${first}/${collection}?filter[project]=${second}`)
      t.match(bracket.json(), { code: 'SCOPE_FIELD' })
      const theirs = (await list(fastify, `/projects/${second}/${collection}?limit=5`)).data.map((d) => d._id)
      const byId = await list(fastify, `/projects/${first}/${collection}?${q({ _id: { $in: theirs } })}`)
      t.same(byId.data, [], "another project's documents stay out even when named by _id")
    })

    t.test('a malformed project id is 400, an unknown one 404', async (t) => {
      const bad = await fastify.inject(`/projects/not-an-id/${collection}`)
      t.equal(bad.statusCode, 400)
      t.match(bad.json(), { code: 'INVALID_PROJECT_ID', errors: [{ param: 'projectId', pointer: '' }] })
      const unknown = await fastify.inject(`/projects/${new ObjectId().toHexString()}/${collection}`)
      t.equal(unknown.statusCode, 404)
      t.match(unknown.headers['content-type'], /^application\/problem\+json/)
      t.match(unknown.json(), { code: 'PROJECT_NOT_FOUND' })
      t.equal((await fastify.inject(`/projects/${first.toUpperCase()}/${collection}?limit=1`)).statusCode, 200,
        'either case')
    })

    t.test('pages walk the whole collection with no duplicate and no gap', async (t) => {
      for (const sort of ['', '&sort=-createdAt', '&sort=%2Bname']) {
        const seen: string[] = []
        for (let skip = 0; ; skip += 7) {
          const page = await list(fastify, `/projects/${first}/${collection}?limit=7&skip=${skip}${sort}`)
          seen.push(...page.data.map((d) => d._id as string))
          if (page.data.length < 7) break
        }
        t.equal(seen.length, PER_PROJECT[collection], `all of them${sort}`)
        t.equal(new Set(seen).size, seen.length, `no duplicate${sort}`)
      }
    })
  })
}

t.test('each field type filters real documents', async (t) => {
  const activities = (await list(fastify, `/projects/${first}/activities?limit=1000`)).data
  const sessions = (await list(fastify, `/projects/${first}/sessions?limit=1000`)).data
  const places = (await list(fastify, `/projects/${first}/places?limit=1000`)).data
  const registrations = (await list(fastify, `/projects/${first}/registrations?limit=1000`)).data
  const idsOf = (docs: Array<Record<string, unknown>>) => docs.map((d) => d._id).sort()
  const check = async (collection: string, query: string, expected: Array<Record<string, unknown>>, what: string) => {
    const page = await list(fastify, `/projects/${first}/${collection}?limit=1000&${query}`)
    t.same(idsOf(page.data), idsOf(expected), what)
    t.ok(expected.length > 0, `${what}: the demo data has matches`)
  }
  await check('activities', q({ name: { $regex: '^yoga', $options: 'i' } }),
    activities.filter((a) => /^yoga/i.test(String(a.name))), 'string $regex with $options')
  await check('activities', q({ active: false }), activities.filter((a) => a.active === false), 'boolean equality')
  const pair = (activities.find((a) => (a.tags as string[]).length >= 2)?.tags as string[]).slice(0, 2)
  await check('activities', `filter[tags][$all]=${pair.join(',')}`,
    activities.filter((a) => pair.every((tag) => (a.tags as string[]).includes(tag))), 'string[] $all, brackets')
  await check('activities', q({ description: { $exists: false } }),
    activities.filter((a) => !('description' in a)), '$exists false')
  const category = activities[0]?.category as string
  await check('activities', q({ category }), activities.filter((a) => a.category === category), 'ref equality')
  await check('places', q({ maxNumberOfParticipants: { $gte: 80 } }),
    places.filter((p) => Number(p.maxNumberOfParticipants) >= 80), 'number $gte')
  await check('places', 'filter[maxNumberOfParticipants][$in]=12,20',
    places.filter((p) => [12, 20].includes(p.maxNumberOfParticipants as number)), 'number $in, brackets')
  await check('sessions', q({ start: '2024-06-15' }),
    sessions.filter((s) => String(s.start).startsWith('2024-06-15')), 'date-only equality is the whole day')
  await check('sessions', q({ start: { $gte: '2024-06-15T12:00:00Z' }, end: { $lt: '2024-06-16' } }),
    sessions.filter((s) => String(s.start) >= '2024-06-15T12:00:00.000Z' && String(s.end) < '2024-06-16'),
    'date range on two fields')
  const place = places[0]?._id as string
  await check('sessions', q({ places: place }),
    sessions.filter((s) => (s.places as string[]).includes(place)), 'ref[] element equality')
  await check('sessions', q({ stewards: { $size: 0 } }),
    sessions.filter((s) => (s.stewards as string[]).length === 0), 'ref[] $size')
  const session = sessions[0]?._id as string
  await check('registrations', q({ 'sessionsSubscriptions.session': session }),
    registrations.filter((r) =>
      (r.sessionsSubscriptions as Array<{ session: string }>).some((s) => s.session === session)),
    'sessionsSubscriptions.session')
  await check('registrations', q({ 'customFields.ticket': 'full', role: { $ne: 'participant' } }),
    registrations.filter((r) => (r.customFields as { ticket: string }).ticket === 'full' && r.role !== 'participant'),
    'custom field and $ne, ANDed')
})

t.test('sort puts missing values first ascending and last descending', async (t) => {
  const asc = (await list(fastify, `/projects/${first}/places?sort=%2BmaxNumberOfParticipants&limit=1000`)).data
  const missing = asc.filter((p) => !('maxNumberOfParticipants' in p)).length
  t.ok(missing > 0, 'the demo data has places without capacity')
  t.ok(asc.slice(0, missing).every((p) => !('maxNumberOfParticipants' in p)), 'missing first')
  const values = asc.slice(missing).map((p) => p.maxNumberOfParticipants as number)
  t.same(values, [...values].sort((a, b) => a - b), 'then ascending')
  const desc = (await list(fastify, `/projects/${first}/places?sort=-maxNumberOfParticipants&limit=1000`)).data
  t.ok(desc.slice(-missing).every((p) => !('maxNumberOfParticipants' in p)), 'missing last descending')
})

t.test('undeclared fields never leave the service', async (t) => {
  const registration = (await list(fastify, `/projects/${first}/registrations?limit=5`)).data
  t.ok(registration.every((r) => !('passwordHash' in r)), 'the demo passwordHash stays private')
  const db = fastify.mongo.db
  if (db === undefined) throw new Error('no db')
  for (const collection of COLLECTIONS) {
    await db.collection(collection).insertOne({
      project: new ObjectId(first),
      name: 'leak-test',
      password: 'hunter2',
      internal: { secret: true },
      sessionsSubscriptions: [{ session: new ObjectId(), secret: 'x' }]
    })
    const res = await fastify.inject(`/projects/${first}/${collection}?${q({ name: 'leak-test' })}`)
    t.equal(res.statusCode, 200)
    t.equal(res.json().data.length, 1, `${collection}: the document is listed`)
    t.notMatch(res.body, /hunter2|password|internal|secret/, `${collection}: nothing undeclared in the body`)
  }
})

t.test('a query over QUERY_TIMEOUT_MS answers 503 QUERY_TIMEOUT', async (t) => {
  const admin = fastify.mongo.client.db('admin')
  const on = await admin.command({ configureFailPoint: 'maxTimeAlwaysTimeOut', mode: 'alwaysOn' })
    .catch(() => undefined)
  if (on === undefined) {
    t.skip('this database does not allow the maxTimeAlwaysTimeOut fail point (test commands disabled)', () => {})
    return
  }
  t.teardown(() => admin.command({ configureFailPoint: 'maxTimeAlwaysTimeOut', mode: 'off' }))
  const res = await fastify.inject('/projects?count=true')
  t.equal(res.statusCode, 503)
  t.match(res.json(), { code: 'QUERY_TIMEOUT', status: 503 })
  t.notMatch(res.body, /MaxTimeMSExpired|exceeded/)
})

t.test('bracket values for custom fields and lists find what the JSON form finds', async (t) => {
  const base = `/projects/${first}/activities?limit=1000&count=true`
  const json = await list(fastify, `${base}&${q({ 'customFields.durationMinutes': { $gt: 60 } })}`)
  t.ok((json.total ?? 0) > 0, `${json.total ?? 0} activities over 60 minutes`)
  const bracket = await list(fastify, `${base}&filter[customFields.durationMinutes][$gt]=60`)
  t.equal(bracket.total, json.total, 'filter[customFields.durationMinutes][$gt]=60 compares numbers')
  const asText = await list(fastify, `${base}&${q({ 'customFields.durationMinutes': { $gt: '60' } })}`)
  t.equal(asText.total, 0, 'JSON still asks for the string "60" when it says so')
  const tags = (await list(fastify, `${base}`)).data.flatMap((d) => d.tags as string[] ?? [])
  const [a, b] = [...new Set(tags)] as [string, string]
  const spaced = await list(fastify, `${base}&filter[tags][$in]=${encodeURIComponent(`${a}, ${b}`)}`)
  const plain = await list(fastify, `${base}&${q({ tags: { $in: [a, b] } })}`)
  t.equal(spaced.total, plain.total, `'${a}, ${b}' means '${a}' and '${b}'`)
})

t.test('a walk goes on whatever the order of the filter\'s keys and of $in\'s members', async (t) => {
  // The same filter written otherwise on each page: JSON in two orders, then brackets.
  const spellings = [
    q({ role: { $in: ['volunteer', 'staff'] }, 'customFields.ticket': { $exists: true } }),
    q({ 'customFields.ticket': { $exists: true }, role: { $in: ['staff', 'volunteer'] } }),
    'filter[customFields.ticket][$exists]=true&filter[role][$in]=staff,volunteer'
  ]
  const base = `/projects/${first}/registrations?sort=%2BcreatedAt&fields=role`
  const whole = (await list(fastify, `${base}&limit=1000&${spellings[0] as string}`)).data.map((d) => d._id)
  const walked: unknown[] = []
  for (let i = 0, after: string | undefined = ''; i < 100 && after !== undefined; i++) {
    const page = await list(fastify, `${base}&limit=3&${spellings[i % spellings.length] as string}${after}`)
    walked.push(...page.data.map((d) => d._id))
    after = page.next === undefined ? undefined : `&after=${page.next}`
  }
  t.ok(whole.length > 6, `${whole.length} registrations: pages in each form`)
  t.same(walked, whole, 'every page followed on, in order')
})
