// Waiting feeds (docs/changes.md): a waiting request answers as soon as a change of its project
// is committed, takes no database connection while it waits, ends with what it has when the
// service stops; CHANGES_MAX_WAITING bounds the requests that wait. Streams are
// test/changes/waiting-streams.test.ts's.
import { ObjectId, type Db } from 'mongodb'
import t from 'tap'
import { FEED_MAX_WAIT } from '../../list-query/compile-list-query.js'
import { build } from '../helpers/build.js'
import { FeedCopy, feedProject, requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'
import { until } from '../helpers/until.js'
import { CURSOR_SECRET, setUp } from './waiting-setup.js'

const feeds = await requireChangeStreams(t)

t.setTimeout(120_000)

t.test('a waiting request answers as soon as a change of its project comes, not another\'s', feeds, async (t) => {
  const { fastify, db, project, copy } = await setUp(t)
  const hub = fastify.changes.hub('registrations', true)
  let answered = false
  // The longest wait: only the change can end it while the test runs (no stop, no client leaving).
  const sent = Date.now()
  const answering = fastify.inject(copy.url(`wait=${FEED_MAX_WAIT}`)).finally(() => { answered = true })
  // Another project's feed waits beside it: its answer shows when the stream has brought that project's change.
  const elsewhere = new ObjectId()
  await db.collection('projects').insertOne({ _id: elsewhere, name: 'E' })
  const other = new FeedCopy(`/projects/${String(elsewhere)}/registrations/changes`)
  await other.catchUp(async (url) => await fastify.inject(url))
  const otherAnswering = fastify.inject(other.url('wait=10'))
  t.ok(await until(() => hub.waiting === 2, 15_000), 'both requests wait on the shared stream')
  const { insertedId: elsewhereId } = await db.collection('registrations')
    .insertOne({ project: elsewhere, role: 'elsewhere' })
  const otherAnswer = JSON.parse((await otherAnswering).body) as FeedAnswer
  t.same(otherAnswer.events.map((event) => event._id), [elsewhereId.toHexString()],
    'the other project\'s request has its change')
  t.notOk(answered, 'the other project\'s change did not end this wait')
  t.equal(hub.waiting, 1, 'this request still waits on the stream')
  const { insertedId } = await db.collection('registrations').insertOne({ project, role: 'volunteer' })
  const res = await answering
  const answer = JSON.parse(res.body) as FeedAnswer
  t.same(answer.events.map((event) => event._id), [insertedId.toHexString()],
    'its own project\'s change, and only that')
  // Its deadline would have answered too (with the change, read then): the answer came before it.
  t.ok(Date.now() < sent + FEED_MAX_WAIT * 1000, 'woken by the change, before the wait\'s deadline')
})

t.test('a wait without changes waits on the stream until wait seconds after the request, ' +
  'then answers with no event and a token', feeds, async (t) => {
  const { fastify, copy } = await setUp(t)
  // When a wait with no change ends is test/changes/waiters.test.ts's: here, what the route asks of it.
  const hub = fastify.changes.hub('registrations', true)
  const asked: Array<{ until: number, at: number }> = []
  const nextWake = hub.nextWake.bind(hub)
  hub.nextWake = async (...args) => {
    asked.push({ until: args[1], at: Date.now() })
    await nextWake(...args)
  }
  const sent = Date.now()
  const res = await fastify.inject(copy.url('wait=1'))
  const answer = JSON.parse(res.body) as FeedAnswer
  t.equal(res.statusCode, 200)
  t.same(answer.events, [])
  t.ok(answer.synced)
  t.equal((await fastify.inject(`${copy.path}?since=${encodeURIComponent(answer.next)}`)).statusCode, 200,
    'a token the feed goes on from')
  t.match(res.headers.link, /rel="next"/)
  t.ok(asked.length >= 1, 'the request waited on the shared stream')
  const first = asked[0] as { until: number, at: number }
  // The route reads the clock between the request's sending and its first wait.
  t.ok(first.until >= sent + 1000 && first.until <= first.at + 1000, 'until one second after the request came')
  t.ok(asked.every((wait) => wait.until === first.until), 'every wake of the request keeps that deadline')
  t.equal(hub.waiting, 0, 'and it waits no more')
})

t.test('a wait\'s deadline is kept on one clock: a monotonic clock running apart from the wall clock ' +
  'does not move it', feeds, async (t) => {
  const { fastify, copy } = await setUp(t)
  const hub = fastify.changes.hub('registrations', true)
  // From the request's sending to its first wait, performance.now runs 50 times as fast as
  // Date.now, as it does apart from a wall clock that NTP slews.
  const real = performance.now
  const origin = real.call(performance)
  const fast = (): number => origin + (real.call(performance) - origin) * 50
  let offset: number | undefined
  performance.now = () => offset === undefined ? fast() : real.call(performance) + offset
  t.teardown(() => { performance.now = real })
  const deadlines: number[] = []
  const nextWake = hub.nextWake.bind(hub)
  hub.nextWake = async (...args) => {
    offset ??= fast() - real.call(performance)
    deadlines.push(args[1])
    await nextWake(...args)
  }
  const sent = Date.now()
  const res = await fastify.inject(copy.url('wait=1'))
  t.equal(res.statusCode, 200)
  t.ok(deadlines.length >= 1, 'the request waited on the shared stream')
  const deadline = deadlines[0] as number
  t.ok(deadline >= sent + 1000, `its wait ends ${deadline - sent} ms after the request was sent, not sooner`)
  t.ok(Date.now() >= sent + 1000, 'and it answered no sooner')
})

t.test('CHANGES_MAX_WAITING bounds the requests that wait; ' +
  'waiting takes no connection from lists', feeds, async (t) => {
  const { fastify, db, copy, project } = await setUp(t, { CHANGES_MAX_WAITING: 50 })
  // The connections checked out of the pool from here on, and the command each one runs: all
  // that the waits take is seen (the shared stream's may have been taken before).
  const client = fastify.database.client()
  const out = new Set<string>()
  const running = new Map<string, string>()
  const key = (event: { address: string, connectionId?: number | string }): string =>
    `${event.address}/${String(event.connectionId)}`
  client.on('connectionCheckedOut', (event) => { out.add(key(event)) })
  client.on('connectionCheckedIn', (event) => { out.delete(key(event)) })
  client.on('commandStarted', (event) => { running.set(key(event), event.commandName) })
  client.on('commandSucceeded', (event) => { running.delete(key(event)) })
  client.on('commandFailed', (event) => { running.delete(key(event)) })
  const waits = Array.from({ length: 50 }, async () => await fastify.inject(copy.url('wait=20')))
  // Each request reads once, then waits on the collection's shared stream: counted there once
  // its read is over, however long a busy machine takes. Its read's cursor is killed without
  // the request waiting for it: the pool is read once those killCursors are done.
  const hub = fastify.changes.hub('registrations', true)
  let idle: string[] = []
  let commands: string[] = []
  t.ok(await until(() => {
    if (hub.waiting !== 50) return false
    idle = [...out].filter((connection) => !running.has(connection))
    commands = [...out].flatMap((connection) => running.get(connection) ?? [])
    return !commands.includes('killCursors')
  }, 15_000, 50), 'all 50 wait on the shared stream, their own reads closed')
  // A waiting request holding a connection would hold it idle, or run a getMore of a stream of
  // its own; the shared stream's getMore and a readiness ping come and go.
  t.same(idle, [], 'no connection is checked out without a command running on it')
  t.ok(commands.every((name) => name === 'getMore' || name === 'ping'),
    `commands running while 50 requests wait: ${commands.join(', ') || 'none'}`)
  t.ok(commands.filter((name) => name === 'getMore').length <= 1, 'at most one getMore: the shared stream\'s')
  const refused = await fastify.inject(copy.url('wait=3'))
  t.equal(refused.statusCode, 503)
  t.match(JSON.parse(refused.body), { code: 'OVERLOADED' })
  t.ok(Number(refused.headers['retry-after']) >= 1, 'with Retry-After')
  t.equal((await fastify.inject(copy.url())).statusCode, 200, 'a feed request that does not wait is served')
  const list = await fastify.inject(`/projects/${String(project)}/registrations`)
  t.equal(list.statusCode, 200, 'lists are served beside them')
  // A change of the project ends every wait.
  await db.collection('registrations').insertOne({ project, role: 'volunteer' })
  const answers = await Promise.all(waits)
  t.ok(answers.every((res) => res.statusCode === 200), 'every waiting request is answered')
  t.ok(answers.every((res) => res.json().events.length === 1), 'with the change')
  t.equal((await fastify.inject(copy.url('wait=1'))).statusCode, 200, 'places are given back')
})

t.test('shutdown ends waiting requests at once, with what they have', feeds, async (t) => {
  const fastify = await build(t, { config: { CURSOR_SECRET } })
  const { path } = await feedProject(fastify.mongo.db as Db, 'registrations')
  const copy = new FeedCopy(path)
  await copy.catchUp(async (url) => await fastify.inject(url))
  const sent = Date.now()
  const answering = fastify.inject(copy.url(`wait=${FEED_MAX_WAIT}`))
  t.ok(await until(() => fastify.changes.hub('registrations', true).waiting === 1, 15_000), 'the request waits')
  fastify.lifecycle.stopAccepting()
  const res = await answering
  t.equal(res.statusCode, 200)
  t.same((JSON.parse(res.body) as FeedAnswer).events, [])
  // That the stop ends a wait with the clock unmoved is test/changes/waiters.test.ts's.
  t.ok(Date.now() < sent + FEED_MAX_WAIT * 1000, 'ended by the stop, before the wait\'s deadline')
})
