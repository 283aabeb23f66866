// A nested list is one database command on a warm path. Whether the path's project
// exists is remembered for PROJECT_CACHE_TTL_MS, both ways, so the 404 contract holds within
// that delay: a project created becomes listable, one deleted answers 404.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { build } from '../../helpers/build.js'
import { watchCommands } from '../../helpers/commands.js'

const TTL = 60_000

t.test('warm: one find per list; cold: one aggregate that also looks the project up', async (t) => {
  const fastify = await build(t, { config: { PROJECT_CACHE_TTL_MS: 60_000 } })
  const db = fastify.mongo.db!
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'p' })
  await db.collection('sessions').insertOne({ project, name: 's' })
  const commands = watchCommands(fastify)
  t.equal((await fastify.inject(`/projects/${project}/sessions`)).statusCode, 200)
  t.same(commands.names(), ['aggregate'], 'first request: the page and the project, in one command')
  for (let i = 0; i < 3; i++) {
    const res = await fastify.inject(`/projects/${project}/sessions`)
    t.equal(res.json().data[0].name, 's')
    t.same(commands.names(), ['find'], 'then the list alone')
  }
  const unknown = new ObjectId()
  t.equal((await fastify.inject(`/projects/${unknown}/sessions`)).statusCode, 404)
  commands.names()
  t.equal((await fastify.inject(`/projects/${unknown}/teams`)).statusCode, 404)
  t.same(commands.names(), [], 'an unknown project, remembered: 404 without a query')
})

t.test(`created and deleted projects are seen once the TTL (${TTL} ms) has passed, not before`, async (t) => {
  // The app's clock, moved by the test: the TTL passes without waiting for it.
  let now = Date.parse('2026-01-01T00:00:00Z')
  const fastify = await build(t, { config: { PROJECT_CACHE_TTL_MS: TTL }, now: () => now })
  const db = fastify.mongo.db!
  const project = new ObjectId()
  const status = async (): Promise<number> => (await fastify.inject(`/projects/${project}/sessions`)).statusCode
  t.equal(await status(), 404, 'not yet created')
  await db.collection('projects').insertOne({ _id: project, name: 'p' })
  now += TTL - 1
  t.equal(await status(), 404, 'created: still remembered as absent just before the TTL')
  now += 1
  t.equal(await status(), 200, 'created: listable once the TTL has passed')
  await db.collection('projects').deleteOne({ _id: project })
  now += TTL - 1
  t.equal(await status(), 200, 'deleted: still remembered as there just before the TTL')
  now += 1
  t.equal(await status(), 404, 'deleted: 404 once the TTL has passed')
})

t.test('PROJECT_CACHE_TTL_MS=0: asked every time', async (t) => {
  const fastify = await build(t, { config: { PROJECT_CACHE_TTL_MS: 0 } })
  const project = new ObjectId()
  await fastify.mongo.db!.collection('projects').insertOne({ _id: project })
  const commands = watchCommands(fastify)
  for (let i = 0; i < 2; i++) {
    await fastify.inject(`/projects/${project}/places`)
    t.same(commands.names(), ['aggregate'])
    await fastify.inject(`/projects/${project}/places?limit=0`)
    t.same(commands.names(), ['find'], 'a count-only page reads no page: the project check alone')
  }
})

t.test('a burst on a project not remembered looks it up once', async (t) => {
  const fastify = await build(t, { config: { PROJECT_CACHE_TTL_MS: TTL } })
  const db = fastify.mongo.db!
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'p' })
  await db.collection('registrations').insertOne({ project, role: 'participant' })
  const commands = watchCommands(fastify)
  const answers = await Promise.all(['role', 'role', 'role'].map(async (by) =>
    await fastify.inject(`/projects/${project}/registrations/counts?by=${by}`)))
  t.same(answers.map((res) => res.statusCode), [200, 200, 200])
  t.same(answers.map((res) => res.json().groups[0]?.count), [1, 1, 1])
  // Each counts request groups and counts (two aggregates); the project's find is shared.
  t.same(commands.names().sort(), [...Array(6).fill('aggregate'), 'find'])
})
