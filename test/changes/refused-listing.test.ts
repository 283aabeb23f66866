// A first listing refused by its checks costs the database its page and nothing more: no read of
// the changes after it, which a listing that found nothing would go on to (docs/changes.md).
import { ObjectId, type Db } from 'mongodb'
import t from 'tap'
import { build } from '../helpers/build.js'
import { watchCommands } from '../helpers/commands.js'
import { feedProject, prepareFeeds, requireChangeStreams } from '../helpers/feeds.js'

const feeds = await requireChangeStreams(t)

t.test('a listing of a project that does not exist: 404 after its page and the lookup alone', feeds, async (t) => {
  const fastify = await build(t, { config: { CURSOR_SECRET: 'a-feed-test-secret-of-32-bytes-at-least' } })
  const db = fastify.mongo.db as Db
  const { project } = await feedProject(db, 'sessions')
  await db.collection('sessions').insertOne({ project, name: 'a' })
  // The collection's shared stream runs: a listing reads its page beside the checks.
  t.equal((await fastify.inject(`/projects/${String(project)}/sessions/changes`)).statusCode, 200)
  t.ok(fastify.changes.hub('sessions', true).isRunning, 'the shared stream runs')
  const commands = watchCommands(fastify)
  for (let i = 0; i < 5; i++) {
    const res = await fastify.inject(`/projects/${String(new ObjectId())}/sessions/changes`)
    t.equal(res.statusCode, 404)
  }
  // Work that outlived an answer would show by the end of a request sent after them (a listing
  // that finds a document reads nothing after its page).
  t.equal((await fastify.inject(`/projects/${String(project)}/sessions/changes`)).statusCode, 200)
  t.same(commands.names(), Array(11).fill('find'), 'each 404 its page and its lookup, then the last page')
})

t.test('a listing of a project that exists and has nothing: its page, then the changes since', feeds, async (t) => {
  const fastify = await build(t, { config: { CURSOR_SECRET: 'a-feed-test-secret-of-32-bytes-at-least' } })
  const db = fastify.mongo.db as Db
  await prepareFeeds(db)
  const [busy, empty] = [new ObjectId(), new ObjectId()]
  await db.collection('projects').insertMany([{ _id: busy, name: 'B' }, { _id: empty, name: 'E' }])
  t.equal((await fastify.inject(`/projects/${String(busy)}/sessions/changes`)).statusCode, 200)
  const commands = watchCommands(fastify)
  const res = await fastify.inject(`/projects/${String(empty)}/sessions/changes`)
  t.match(res.json(), { events: [], synced: true })
  t.ok(commands.names().includes('aggregate'), 'the changes since its start were read: the answer vouches for them')
})
