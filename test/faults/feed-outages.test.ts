// Change feeds while the database misbehaves: every feed request answers within the bound
// (503, never a hang or a 500). A request that waits answers 503 DATABASE_UNAVAILABLE as soon as
// the shared stream gives up on the database, not an empty 200 at the end of its wait
// (docs/changes.md). After the fault the shared stream follows again and a follower converges
// on its list, without a change lost in between.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { FeedCopy, listAll, requireChangeStreams } from '../helpers/feeds.js'
import { build } from '../helpers/build.js'
import { clientOfTestDatabase } from '../helpers/database.js'
import { timeUntil, until } from '../helpers/until.js'
import {
  ANSWER_BOUND_MS,
  HEARTBEAT_MS,
  QUERY_TIMEOUT_MS,
  RECOVERY_BOUND_MS,
  SLACK_MS,
  feedFaultApp,
  justChecked,
  proxiedDatabase,
  recoveryTime,
  serverChecks,
  timed
} from './fault-app.js'

const feeds = await requireChangeStreams(t)

t.setTimeout(120_000)
/** The wait the waiting request asks for: it must answer long before this. */
const WAIT_S = 30
/**
 * How soon the driver learns that the database is gone: at once in an outage (its connections
 * are reset), at the timeout of its next check of a silent one.
 */
const NOTICED_MS = { outage: 0, blackhole: HEARTBEAT_MS + QUERY_TIMEOUT_MS }
/**
 * It then gives the shared stream up after waiting for a server twice (closing
 * the cursor, resuming), and the woken request's read answers within the bound.
 */
const GIVEN_UP_MS = 2 * QUERY_TIMEOUT_MS + ANSWER_BOUND_MS

t.test('outage and silence: feeds answer in bounds, a waiting request at once, then converge', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  await sessions.insertMany(Array.from({ length: 5 }, (_, i) => ({ project, name: `s${i}` })))
  const get = async (url: string) => await fastify.inject(url)
  const copy = new FeedCopy(path)
  await copy.catchUp(get)
  const hub = fastify.changes.hub('sessions', true)
  const checks = serverChecks(fastify)

  // A poll meets an outage as a refused connection, a database just gone silent (the driver
  // still trusting it) as its own time limit.
  for (const [fault, pollCode] of [['outage', 'DATABASE_UNAVAILABLE'], ['blackhole', 'QUERY_TIMEOUT']] as const) {
    t.ok(hub.isRunning, `${fault}: the shared stream follows the collection`)
    const waiting = timed(fastify, copy.url(`wait=${WAIT_S}`))
    t.ok(await until(() => hub.waiting === 1, ANSWER_BOUND_MS + SLACK_MS),
      `${fault}: a request waits on the shared stream`)
    if (fault === 'blackhole') t.ok(await justChecked(checks), 'the driver has just checked the server')
    proxy[fault]()
    const faulted = Date.now()
    const poll = await timed(fastify, copy.url())
    t.match(poll, { status: 503, code: pollCode, retryAfter: '1' }, `${fault}: a poll is 503 ${pollCode}`)
    t.ok(poll.ms <= ANSWER_BOUND_MS, `${fault}: answered in ${poll.ms} ms`)
    const waited = await waiting
    const after = Date.now() - faulted
    t.match(waited, { status: 503, code: 'DATABASE_UNAVAILABLE', retryAfter: '1' },
      `${fault}: the waiting request answers 503 DATABASE_UNAVAILABLE`)
    t.ok(after <= NOTICED_MS[fault] + GIVEN_UP_MS + SLACK_MS,
      `${fault}: ${after} ms after the fault, once the shared stream gave up, not at the end of its wait`)
    t.equal(hub.waiting, 0, `${fault}: nothing waits any more`)
    proxy.heal()
    // Written while the service may not have its stream back yet: the token goes on from before.
    const recovered = await recoveryTime(fastify, copy.url())
    t.ok(recovered <= RECOVERY_BOUND_MS, `${fault}: the feed answers again after ${recovered} ms`)
    const following = await timeUntil(() => hub.isRunning, RECOVERY_BOUND_MS)
    t.ok(following < Infinity, `${fault}: the shared stream follows again ${following} ms later`)
    await sessions.insertOne({ project, name: `after ${fault}` })
    await sessions.deleteOne({ project, name: 's0' })
    await copy.catchUp(get)
    t.same(copy.sorted(), await listAll(get, `/projects/${String(project)}/sessions`),
      `${fault}: the copy equals the list`)
  }
})

t.test('a silent database: the check of whether a collection can have a feed is ' +
  'bounded like any command', async (t) => {
  const proxy = await proxiedDatabase(t)
  // Without pre- and post-images, a collection is checked again at each feed request.
  const { db } = await clientOfTestDatabase('feed_check')
  await db.createCollection('sessions', { changeStreamPreAndPostImages: { enabled: false } })
  const fastify = await build(t, { databaseUri: proxy.uri, config: { QUERY_TIMEOUT_MS, MONGODB_DB: db.databaseName } })
  const path = `/projects/${String(new ObjectId())}/sessions/changes`
  t.match(JSON.parse((await fastify.inject(path)).body),
    { status: 503, code: 'CHANGES_UNAVAILABLE', detail: /sessions/ }, 'checked while it answers')
  t.ok(await justChecked(serverChecks(fastify)), 'the driver has just checked the server')
  proxy.blackhole()
  // Just gone silent: the driver still trusts its connection, and the request's own time limit ends the check.
  const answer = await timed(fastify, path)
  t.match(answer, { status: 503, code: 'QUERY_TIMEOUT', retryAfter: '1' }, 'a silent database: 503 QUERY_TIMEOUT')
  t.ok(answer.ms <= ANSWER_BOUND_MS, `answered in ${answer.ms} ms`)
  proxy.heal()
})
