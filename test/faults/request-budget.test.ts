// One budget per request, whatever it reads in steps: a revalidation, a project's check and the
// query share QUERY_TIMEOUT_MS plus the margin (counts read their project beside the rest); a
// feed's wait counts from the request's arrival;
// a feed's first request opens the shared stream beside its checks, not after them;
// and the shared change stream gives up a getMore the server never answers, so that waiting
// requests hear of changes again.
import type { FastifyInstance, InjectOptions } from 'fastify'
import { ObjectId, type CommandStartedEvent, type CommandSucceededEvent } from 'mongodb'
import t from 'tap'
import { requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'
import { timeUntil } from '../helpers/until.js'
import { ANSWER_BOUND_MS, QUERY_TIMEOUT_MS, RECOVERY_BOUND_MS, SLACK_MS, feedFaultApp } from './fault-app.js'

const feeds = await requireChangeStreams(t)
t.setTimeout(120_000)

interface Timed { status: number, code?: string, ms: number, body: string }

async function timed (fastify: FastifyInstance, options: InjectOptions): Promise<Timed> {
  const started = Date.now()
  const res = await fastify.inject(options)
  const ms = Date.now() - started
  return {
    status: res.statusCode,
    code: res.statusCode >= 400 && res.body !== '' ? (res.json() as { code?: string }).code : undefined,
    ms,
    body: res.body
  }
}

/** The project is no longer remembered: as if learnt an hour ago. */
function forget (fastify: FastifyInstance, project: ObjectId): void {
  fastify.projectCache.set(project.toHexString(), true, Date.now() - 3_600_000)
}

/** The ETag of `url` once a request naming it is answered 304 (the collection's stream then follows). */
async function revalidating (fastify: FastifyInstance, url: string): Promise<string> {
  let etag = ''
  const took = await timeUntil(async () => {
    const res = await fastify.inject({ url, headers: etag === '' ? {} : { 'if-none-match': etag } })
    if (res.statusCode === 304) return true
    etag = res.headers.etag as string
    return false
  }, RECOVERY_BOUND_MS, 50)
  if (took === Infinity) throw new Error(`${url} never answered 304`)
  return etag
}

t.test('If-None-Match under a silent database: one budget for the revalidation and the query', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  await sessions.insertMany([{ project, name: 'a' }, { project, name: 'b' }])
  const list = path.replace(/changes$/, '?count=true')
  const counts = path.replace(/changes$/, 'counts?by=name')
  const tags = { list: await revalidating(fastify, list), counts: await revalidating(fastify, counts) }
  proxy.blackhole()
  t.teardown(() => { proxy.heal() })
  const answers = {
    list: await timed(fastify, { url: list, headers: { 'if-none-match': tags.list } }),
    counts: await timed(fastify, { url: counts, headers: { 'if-none-match': tags.counts } }),
    head: await timed(fastify, { method: 'HEAD', url: list, headers: { 'if-none-match': tags.list } })
  }
  for (const [name, answer] of Object.entries(answers)) {
    t.equal(answer.status, 503, `${name}: 503`)
    t.ok(answer.ms <= ANSWER_BOUND_MS,
      `${name}: answered in ${answer.ms} ms, within one budget (${ANSWER_BOUND_MS} ms)`)
  }
})

t.test('a slow database: counts\' project check, revalidation and aggregation share one budget', feeds, async (t) => {
  const { proxy, fastify, db, sessions } = await feedFaultApp(t)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'Q' })
  await sessions.insertOne({ project, name: 'a' })
  const counts = `/projects/${String(project)}/sessions/counts?by=name`
  const etag = await revalidating(fastify, counts)
  // Each reply takes most of the budget: the project's check (no longer remembered) and the
  // revalidation take it all, and nothing is left for the aggregation.
  forget(fastify, project)
  proxy.slow(QUERY_TIMEOUT_MS * 0.9)
  t.teardown(() => { proxy.heal() })
  const answer = await timed(fastify, { url: counts, headers: { 'if-none-match': etag } })
  t.match(answer, { status: 503, code: 'QUERY_TIMEOUT' })
  t.ok(answer.ms <= ANSWER_BOUND_MS, `answered in ${answer.ms} ms, within one budget`)
})

t.test('a slow database: counts check their project beside the aggregation, ' +
  'one round trip within the budget', feeds, async (t) => {
  const { proxy, fastify, db, sessions } = await feedFaultApp(t)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'C' })
  await sessions.insertOne({ project, name: 'a' })
  proxy.slow(QUERY_TIMEOUT_MS * 0.8)
  t.teardown(() => { proxy.heal() })
  const answer = await timed(fastify, { url: `/projects/${String(project)}/sessions/counts?by=name` })
  t.equal(answer.status, 200, 'counted: the project (not remembered) and the groups read side by side')
  t.ok(answer.ms <= ANSWER_BOUND_MS, `in ${answer.ms} ms`)
})

/** A feed's wait in the test below, in ms: longer than its first reads take on the slow database. */
const WAIT_MS = 2000
/**
 * Each reply held this long in the test below: the project check, the read and one more reply fit
 * in the one budget. The project check is answered a reply after the request arrives, the end of
 * the first reads a reply after that at least: a deadline counted from either is told apart with
 * REPLY_MS to spare on each side, far more than the clock's rounding.
 */
const REPLY_MS = QUERY_TIMEOUT_MS * 0.3

t.test('a feed\'s wait counts from the request\'s arrival, not from the end of its first reads', feeds, async (t) => {
  const { proxy, fastify, sessions, db } = await feedFaultApp(t)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'W' })
  await sessions.insertOne({ project, name: 'a' })
  const feed = `/projects/${String(project)}/sessions/changes`
  const listed = (await fastify.inject(feed)).json() as FeedAnswer
  t.ok(listed.synced)
  // The deadline the route gives its wait, as test/changes/waiting.test.ts reads it.
  const hub = fastify.changes.hub('sessions', true)
  const deadlines: number[] = []
  const nextWake = hub.nextWake.bind(hub)
  hub.nextWake = async (...args) => {
    deadlines.push(args[1])
    await nextWake(...args)
  }
  // When the request's project check is answered: the end of its first read, before its others.
  const client = fastify.database.client()
  const checks = new Set<number>()
  let checkedAt = 0
  const started = (event: CommandStartedEvent): void => {
    if (event.commandName === 'find' && event.command.find === 'projects') checks.add(event.requestId)
  }
  const succeeded = (event: CommandSucceededEvent): void => {
    if (checkedAt === 0 && checks.has(event.requestId)) checkedAt = Date.now()
  }
  client.on('commandStarted', started).on('commandSucceeded', succeeded)
  t.teardown(() => { client.off('commandStarted', started).off('commandSucceeded', succeeded) })
  proxy.slow(REPLY_MS)
  t.teardown(() => { proxy.heal() })
  forget(fastify, project)
  const sent = Date.now()
  const answer = await timed(fastify, { url: `${feed}?wait=${WAIT_MS / 1000}&since=${listed.next}` })
  const answeredAt = Date.now()
  t.equal(answer.status, 200)
  t.same((JSON.parse(answer.body) as FeedAnswer).events, [], 'nothing changed')
  t.ok(checkedAt > 0 && deadlines.length >= 1, 'it checked its project, then waited on the shared stream')
  const deadline = deadlines[0] as number
  t.ok(deadline >= sent + WAIT_MS, `its wait ends ${deadline - sent} ms after the request was sent, not sooner`)
  // From its arrival: before WAIT_MS after the check's answer. From the end of its reads: a reply later than that.
  t.ok(deadline < checkedAt + WAIT_MS,
    `and ${checkedAt + WAIT_MS - deadline} ms before ${WAIT_MS} ms after its project check was answered ` +
    `(replies held ${REPLY_MS} ms): counted from its arrival`)
  t.ok(deadlines.every((until) => until === deadline), 'every wake of the request keeps that deadline')
  t.ok(answer.ms >= WAIT_MS, `it waited its ${WAIT_MS} ms (${answer.ms} ms)`)
  t.ok(answeredAt <= deadline + SLACK_MS, `and answered at its deadline (${answeredAt - deadline} ms after it)`)
})

t.test('a first feed request opens the shared stream beside its project and identity checks, ' +
  'not a round trip after them', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  await sessions.insertOne({ project, name: 'a' })
  t.equal(await fastify.changes.unavailable('sessions', true), undefined,
    'the deployment gives feeds (its verdict kept)')
  const hub = fastify.changes.hub('sessions', true)
  t.notOk(hub.isRunning, 'no feed asked yet: no stream')
  // The collection's identity check is held: the stream opens meanwhile.
  const held = proxy.holdReply((command) => command.listCollections !== undefined)
  t.teardown(() => { held.release() })
  const first = fastify.inject(path)
  await held.held
  t.ok(await timeUntil(() => hub.isRunning, ANSWER_BOUND_MS) < Infinity,
    'the stream follows while the identity check waits for its reply')
  held.release()
  const answer = await first
  t.equal(answer.statusCode, 200)
  t.equal((answer.json() as FeedAnswer).events.length, 1, 'and the listing comes')
})

t.test('the shared stream\'s getMore never answered: the stream is opened anew, ' +
  'and a waiting request gets its change', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  await sessions.insertOne({ project, name: 'a' })
  const listed = (await fastify.inject(path)).json() as FeedAnswer
  const hub = fastify.changes.hub('sessions', true)
  // The database answers everything but the stream's next getMore, whose reply is held: a
  // connection gone silent under one command, while pings and other reads go on.
  const held = proxy.holdReply((command) => command.getMore !== undefined && command.collection === 'sessions')
  t.teardown(() => { held.release() })
  await held.held
  const started = Date.now()
  const waiting = timed(fastify, { url: `${path}?wait=30&since=${listed.next}` })
  t.ok(await timeUntil(() => hub.waiting === 1, ANSWER_BOUND_MS + SLACK_MS) < Infinity, 'a request waits on the stream')
  const changed = String((await sessions.insertOne({ project, name: 'while the stream was stuck' })).insertedId)
  const answer = await waiting
  t.equal(answer.status, 200)
  t.same((JSON.parse(answer.body) as FeedAnswer).events.map((event) => event._id), [changed], 'the change')
  // The getMore's wait (1 s), its time limit and the silence allowed, then a reopening a second later.
  const bound = 1000 + QUERY_TIMEOUT_MS + 2000 + 1000 + SLACK_MS
  t.ok(Date.now() - started <= bound,
    `within ${Date.now() - started} ms of the stall (bound ${bound} ms), not at the end of its 30 s wait`)
  t.ok(await timeUntil(() => hub.isRunning, RECOVERY_BOUND_MS) < Infinity, 'the stream follows again')
})
