import t from 'tap'
import { buildWithDemoData, list, q } from '../../helpers/demo-app.js'

const fastify = await buildWithDemoData(t)

t.test('GET /projects lists every project in the §3 envelope', async (t) => {
  const page = await list(fastify, '/projects')
  t.equal(page.data.length, 3)
  t.same(Object.keys(page).sort(), ['data', 'limit', 'skip'], 'no total unless count=true')
  t.equal(page.limit, 100, 'DEFAULT_LIMIT')
  t.equal(page.skip, 0)
  const ids = page.data.map((p) => p._id as string)
  t.same(ids, [...ids].sort(), 'default order: _id ascending')
})

t.test('GET /projects/public only returns public projects, whatever the filter says', async (t) => {
  const page = await list(fastify, '/projects/public?count=true')
  t.equal(page.total, 2)
  t.ok(page.data.every((p) => p.public === true))
  const contrary = await list(fastify, `/projects/public?${q({ public: false })}`)
  t.same(contrary.data, [], 'public:false on the public list matches nothing')
  const named = await list(fastify, `/projects/public?${q({ name: { $regex: 'Retreat' } })}`)
  t.same(named.data, [], 'the private project cannot be reached by name')
})

t.test('projects filter and sort like any list', async (t) => {
  const page = await list(fastify, `/projects?${q({ 'customFields.city': { $in: ['Lyon', 'Ghent'] } })}&sort=-name`)
  t.same(page.data.map((p) => p.name), ['Staff Retreat (internal)', 'Festival des Lumières 2024'])
  const res = await fastify.inject(`/projects?${q({ project: '665f1c2e9b1d4a3f5c7e8a90' })}`)
  t.match(res.json(), { status: 400, code: 'UNKNOWN_FIELD' }, 'projects have no project field')
})

t.test('JSON types: ids as 24-hex lowercase, dates with milliseconds and Z, missing fields absent', async (t) => {
  const { data } = await list(fastify, '/projects')
  for (const project of data) {
    t.match(project._id, /^[0-9a-f]{24}$/)
    t.match(project.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    t.notOk(Object.values(project).includes(null), 'never null')
  }
})

t.test('undeclared project fields never leave the service', async (t) => {
  await fastify.mongo.db?.collection('projects').insertOne({
    name: 'Leaky', public: true, password: 'hunter2', apiKey: 'k-123'
  })
  for (const url of ['/projects', '/projects/public']) {
    const res = await fastify.inject(`${url}?${q({ name: 'Leaky' })}`)
    t.equal(res.json().data.length, 1)
    t.notMatch(res.body, /hunter2|password|apiKey|k-123/, url)
  }
})

t.test('a small page sent as text keeps every byte: non-ASCII names, content-length in bytes', async (t) => {
  const name = 'Fête des Lumières ✨ 😀 — 東京'
  await fastify.mongo.db?.collection('projects').insertOne({ name, public: true, createdAt: new Date() })
  const res = await fastify.inject(`/projects?${q({ name })}`)
  t.equal(res.statusCode, 200)
  t.ok(res.rawPayload.length < 4096, 'a page small enough to leave as text')
  t.equal(Number(res.headers['content-length']), res.rawPayload.length, 'content-length counts bytes, not characters')
  t.equal(JSON.parse(res.rawPayload.toString('utf8')).data[0].name, name)
  t.ok(res.rawPayload.includes(Buffer.from(name, 'utf8')), 'the name as UTF-8, not escaped')
})
