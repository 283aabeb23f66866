// A database that is slow but answers is not an outage, for feeds too: when every reply takes
// QUERY_TIMEOUT_MS / 2, a feed's answers are 200 (with nothing new, with a change just made,
// after a wait, and the first listing), for a project the service remembers and for one it must
// look up again, several requests at a time. From a fresh start: slow-database.test.ts.
import type { FastifyInstance } from 'fastify'
import { ObjectId } from 'mongodb'
import t from 'tap'
import type { FeedAnswer } from '../helpers/feeds.js'
import { requireChangeStreams, throughMongos } from '../helpers/feeds.js'
import { until } from '../helpers/until.js'
import { QUERY_TIMEOUT_MS, RECOVERY_BOUND_MS, feedFaultApp } from './fault-app.js'

const feeds = await requireChangeStreams(t)
t.setTimeout(120_000)
// Through mongos, an answer of "nothing" also waits for the idle shards' no-op writes, up to
// periodicNoopIntervalSecs (docs/changes.md, "Idle shards"): longer than this file's budget allows.
const vouching = await throughMongos()
  ? { skip: 'through mongos, "nothing" waits for idle shards\' no-op writes besides its round trips' }
  : feeds

const REPLY_MS = QUERY_TIMEOUT_MS / 2
const PROJECTS = 6

/** The project is no longer remembered: as if learnt an hour ago. */
function forget (fastify: FastifyInstance, project: ObjectId): void {
  fastify.projectCache.set(project.toHexString(), true, Date.now() - 3_600_000)
}

interface Answer { status: number, code?: string, ms: number, body: string }

async function answer (fastify: FastifyInstance, url: string): Promise<Answer> {
  const started = Date.now()
  const res = await fastify.inject(url)
  const code = res.statusCode >= 400 ? (res.json() as { code?: string }).code : undefined
  return { status: res.statusCode, code, ms: Date.now() - started, body: res.body }
}

const outcome = (answers: Answer[]): string =>
  answers.map((a) => `${a.status}${a.code === undefined ? '' : ` ${a.code}`} in ${a.ms} ms`).join(', ')

t.test(`every reply held ${REPLY_MS} ms (QUERY_TIMEOUT_MS / 2): feed answers are 200`, vouching, async (t) => {
  const { proxy, fastify, db, sessions } = await feedFaultApp(t)
  const projects = Array.from({ length: PROJECTS }, () => new ObjectId())
  await db.collection('projects').insertMany(projects.map((_id, i) => ({ _id, name: `P${i}` })))
  await sessions.insertMany(projects.flatMap((project) => [{ project, name: 'a' }, { project, name: 'b' }]))
  const paths = projects.map((project) => `/projects/${String(project)}/sessions/changes`)
  const tokens = await Promise.all(paths.map(async (path) => ((await fastify.inject(path)).json() as FeedAnswer).next))
  const since = (i: number, query = ''): string =>
    `${paths[i] as string}?since=${encodeURIComponent(tokens[i] as string)}${query}`
  proxy.slow(REPLY_MS)
  t.teardown(() => { proxy.heal() })
  const all = async (url: (i: number) => string): Promise<Answer[]> =>
    await Promise.all(projects.map(async (_project, i) => await answer(fastify, url(i))))
  for (const cold of [false, true]) {
    const remembered = cold ? 'a project looked up again' : 'a remembered project'
    if (cold) projects.forEach((project) => { forget(fastify, project) })
    const quiet = await all((i) => since(i))
    t.ok(quiet.every((a) => a.status === 200), `${remembered}, nothing new: ${outcome(quiet)}`)
    if (cold) projects.forEach((project) => { forget(fastify, project) })
    // A change of one project, just made: the others still answer "nothing", the one its change.
    await sessions.insertOne({ project: projects[0], name: cold ? 'cold' : 'warm' })
    const changed = await all((i) => since(i))
    t.ok(changed.every((a) => a.status === 200), `${remembered}, a change just made: ${outcome(changed)}`)
    t.match(JSON.parse(changed[0]?.body ?? '{}'), { events: [{ type: 'upsert' }] }, 'with the change')
    if (cold) projects.forEach((project) => { forget(fastify, project) })
    const waited = await all((i) => since(i, '&wait=1'))
    t.ok(waited.every((a) => a.status === 200), `${remembered}, a wait: ${outcome(waited)}`)
    if (cold) projects.forEach((project) => { forget(fastify, project) })
    const listed = await all((i) => `${paths[i] as string}?limit=1`)
    t.ok(listed.every((a) => a.status === 200), `${remembered}, the first listing: ${outcome(listed)}`)
  }
})

t.test('a first listing that finds nothing: 200, its project remembered or looked up again', vouching, async (t) => {
  const { proxy, fastify, db, sessions } = await feedFaultApp(t)
  const [busy, ...projects] = Array.from({ length: PROJECTS + 1 }, () => new ObjectId())
  await db.collection('projects').insertMany([busy, ...projects].map((_id, i) => ({ _id, name: `P${i}` })))
  await sessions.insertOne({ project: busy, name: 'a' })
  // The collection's shared stream runs (another project's feed started it); these projects have no sessions.
  t.equal((await fastify.inject(`/projects/${String(busy)}/sessions/changes`)).statusCode, 200)
  for (const project of projects) await fastify.inject(`/projects/${String(project)}/sessions`)
  proxy.slow(REPLY_MS)
  t.teardown(() => { proxy.heal() })
  for (const cold of [false, true]) {
    if (cold) projects.forEach((project) => { forget(fastify, project) })
    const listed = await Promise.all(projects.map(async (project) =>
      await answer(fastify, `/projects/${String(project)}/sessions/changes?limit=1`)))
    t.ok(listed.every((a) => a.status === 200 && (JSON.parse(a.body) as FeedAnswer).events.length === 0),
      `${cold ? 'a project looked up again' : 'a remembered project'}: ${outcome(listed)}`)
  }
})

t.test('a wait while other projects change answers at its deadline, not a read later', feeds, async (t) => {
  const { proxy, fastify, db, sessions } = await feedFaultApp(t)
  const [quiet, busy] = [new ObjectId(), new ObjectId()]
  await db.collection('projects').insertMany([{ _id: quiet, name: 'Q' }, { _id: busy, name: 'B' }])
  const path = `/projects/${String(quiet)}/sessions/changes`
  const { next } = (await fastify.inject(path)).json() as FeedAnswer
  proxy.slow(REPLY_MS)
  t.teardown(() => { proxy.heal() })
  // Another project is written to all along (straight to the database): the shared stream moves.
  // A write every 100 ms, at most 100 of them: a pace, not a wait for an outcome.
  const writing = { on: true }
  const writer = (async () => {
    for (let i = 0; writing.on && i < 100; i++) {
      await sessions.insertOne({ project: busy, name: `b${i}` })
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })()
  t.teardown(async () => {
    writing.on = false
    await writer
  })
  const WAIT_S = 2
  const waited = await answer(fastify, `${path}?since=${encodeURIComponent(next)}&wait=${WAIT_S}`)
  writing.on = false
  t.equal(waited.status, 200)
  t.same((JSON.parse(waited.body) as FeedAnswer).events, [], 'nothing of its own project')
  // Its time was vouched for by its first read: the end of the wait needs no other.
  t.ok(waited.ms < WAIT_S * 1000 + REPLY_MS, `answered in ${waited.ms} ms, less than a reply after its ${WAIT_S} s`)
})

t.test('a poll whose answer holds removes reads why they left beside the documents', feeds, async (t) => {
  const { proxy, fastify, db, sessions } = await feedFaultApp(t)
  const [project, elsewhere] = [new ObjectId(), new ObjectId()]
  await db.collection('projects').insertMany([{ _id: project, name: 'R' }, { _id: elsewhere, name: 'E' }])
  const { insertedIds } = await sessions.insertMany([{ project, name: 'moves' }, { project, name: 'goes' }])
  const path = `/projects/${String(project)}/sessions/changes`
  let { next } = (await fastify.inject(path)).json() as FeedAnswer
  // Caught up with the two inserts: the next answers hold only what happens below.
  next = ((await fastify.inject(`${path}?since=${encodeURIComponent(next)}`)).json() as FeedAnswer).next
  proxy.slow(REPLY_MS)
  t.teardown(() => { proxy.heal() })
  const hub = fastify.changes.hub('sessions', true)
  const before = hub.mark()
  await sessions.updateOne({ _id: insertedIds[0] }, { $set: { project: elsewhere } })
  await sessions.deleteOne({ _id: insertedIds[1] })
  // Both among the shared stream's recent changes: the answer reads only the documents again.
  t.ok(await until(() => hub.mark() >= before + 2, RECOVERY_BOUND_MS), 'the shared stream brought both')
  const removed = await answer(fastify, `${path}?since=${encodeURIComponent(next)}`)
  t.equal(removed.status, 200)
  t.same((JSON.parse(removed.body) as FeedAnswer).events.map((event) => [event.type, event.reason]).sort(),
    [['remove', 'deleted'], ['remove', 'moved']], 'each remove with its reason')
  t.ok(removed.ms < 2 * REPLY_MS, `in ${removed.ms} ms: one round trip, the documents and their states side by side`)
})
