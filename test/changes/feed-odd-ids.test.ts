// A document stored with an _id that is no ObjectId (another service's) has no feed event: the list
// leaves that _id out (docs/changes.md), and a copy kept by _id could not hold it.
import { ObjectId, type Db } from 'mongodb'
import t from 'tap'
import { build } from '../helpers/build.js'
import { FeedCopy, feedProject, listAll, prepareFeeds, requireChangeStreams } from '../helpers/feeds.js'

const feeds = await requireChangeStreams(t)

t.test('a document whose _id is no ObjectId has no event: the list leaves that _id out', feeds, async (t) => {
  const fastify = await build(t, { config: { CURSOR_SECRET: 'a-feed-test-secret-of-32-bytes-at-least' } })
  const db = fastify.mongo.db as Db
  await prepareFeeds(db)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'P' })
  const get = async (url: string) => await fastify.inject(url)
  const teams = db.collection('teams')
  // Another service's ids (the driver's types allow only ObjectIds).
  const odd = ['team-string-id', 42, { a: 1 }] as unknown as ObjectId[]
  await teams.insertMany([{ project, name: 'Plain' }, ...odd.map((_id) => ({ _id, project, name: 'Odd' }))])
  const path = `/projects/${String(project)}/teams/changes`
  const copy = new FeedCopy(path)
  await copy.catchUp(get, 2)
  t.same([...copy.documents.values()].map((doc) => doc.name), ['Plain'], 'the listing: the plain document only')
  for (const _id of odd) await teams.updateOne({ _id }, { $set: { name: 'Odder' } })
  await teams.deleteOne({ _id: odd[0] })
  await teams.insertOne({ project, name: 'Later' })
  await copy.catchUp(get, 2)
  t.same([...copy.documents.values()].map((doc) => doc.name).sort(), ['Later', 'Plain'], 'the changes: the same')
  t.ok([...copy.seen].every((id) => /^[0-9a-f]{24}$/.test(id)), 'every event\'s _id is an ObjectId\'s hex')
  const listed = await listAll(get, `/projects/${String(project)}/teams`)
  t.equal(listed.length, 4, 'the list has all four')
  t.equal(listed.filter((text) => !text.includes('"_id"')).length, 2, 'the odd ones without _id')
})

t.test('a listing page of odd ids alone, with more to come: no events, and a wait is not waited', feeds, async (t) => {
  const fastify = await build(t, { config: { CURSOR_SECRET: 'a-feed-test-secret-of-32-bytes-at-least' } })
  const db = fastify.mongo.db as Db
  const { project } = await feedProject(db, 'sessions')
  // Strings sort before ObjectIds: the first page holds the odd document alone.
  await db.collection('sessions').insertMany([
    { _id: 'a-string-id' as unknown as ObjectId, project, name: 'Odd' }, { project, name: 'Plain' }
  ])
  const path = `/projects/${String(project)}/sessions/changes?limit=1&wait=30`
  const started = Date.now()
  const first = await fastify.inject(path)
  t.equal(first.statusCode, 200)
  t.match(first.json(), { events: [], synced: false }, 'a page with nothing to send, and more of the listing')
  t.ok(Date.now() - started < 10_000, 'answered without waiting: the listing is not done')
  const next = await fastify.inject(`${path}&since=${encodeURIComponent((first.json() as { next: string }).next)}`)
  t.match(next.json(), { events: [{ type: 'upsert', document: { name: 'Plain' } }], synced: true }, 'the next page')
})
