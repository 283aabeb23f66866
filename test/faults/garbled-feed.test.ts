// A change stream's reply damaged on the way. The shared stream's getMore reply that does not
// decode: feed requests answer within the bound with the change (they read on their own while
// the stream is down), the shared stream follows again from its last token, and a follower
// converges on its list without a change lost. A request's own stream opened on a reply without
// its cursor: a 503, as for a list.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { FeedCopy, listAll, requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'
import { timeUntil, until } from '../helpers/until.js'
import { ANSWER_BOUND_MS, RECOVERY_BOUND_MS, SLACK_MS, feedFaultApp } from './fault-app.js'
import { REPLY_DOCUMENT_AT } from './fault-proxy.js'

interface Answer { status: number, code?: string, ms: number, ids: string[] }

/** One feed request, timed: its status, and the `_id`s its events name (its problem code when it is one). */
async function answer (fastify: FastifyInstance, url: string): Promise<Answer> {
  const started = Date.now()
  const res = await fastify.inject(url)
  const ms = Date.now() - started
  if (res.statusCode !== 200) {
    return { status: res.statusCode, code: (res.json() as { code?: string }).code, ms, ids: [] }
  }
  return { status: 200, ms, ids: (res.json() as FeedAnswer).events.map((event) => event._id) }
}

const feeds = await requireChangeStreams(t)
t.setTimeout(120_000)

t.test('a damaged getMore reply of the shared change stream: answers with the change within the bound, ' +
  'then the stream follows again and nothing is lost', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  await sessions.insertMany(Array.from({ length: 3 }, (_, i) => ({ project, name: `s${i}` })))
  const get = async (url: string) => await fastify.inject(url)
  const copy = new FeedCopy(path)
  await copy.catchUp(get)
  const hub = fastify.changes.hub('sessions', true)
  t.ok(hub.isRunning, 'the shared stream follows the collection')

  // A request waits on the stream for a change made meanwhile.
  const waiting = answer(fastify, copy.url('wait=30'))
  t.ok(await timeUntil(() => hub.waiting === 1, ANSWER_BOUND_MS + SLACK_MS) < Infinity,
    'a request waits on the shared stream')
  // The reply to the next getMore of a change stream on the collection comes back with the first
  // element of its reply of an unknown type. Nothing but the shared stream reads a change stream
  // until that getMore is on its way (the waiting request reads only when the stream wakes it):
  // the damage is the shared stream's, and no request meets it.
  let matched = false
  let damaged = 0
  proxy.rewriteReply((command) => {
    if (command.getMore !== undefined && command.collection === 'sessions') matched = true
    return matched
  }, (frame) => {
    frame[REPLY_DOCUMENT_AT + 4] = 0x20
    damaged++
  })
  t.ok(await until(() => matched, ANSWER_BOUND_MS + SLACK_MS), 'the shared stream asks for its next batch')
  t.equal(hub.waiting, 1, 'while the request still waits on it')
  const during = String((await sessions.insertOne({ project, name: 'during the damage' })).insertedId)
  // Polls while the stream meets the damage, and a few after it: each from the copy's token,
  // from before the change.
  const polls: Answer[] = []
  let after = 0
  await timeUntil(async () => {
    polls.push(await answer(fastify, copy.url()))
    if (damaged > 0) after++
    return after >= 5
  }, RECOVERY_BOUND_MS, 50)
  t.equal(damaged, 1, 'a getMore reply was damaged')
  const wrong = polls.filter((poll) => poll.status !== 200 || !poll.ids.includes(during) || poll.ms > ANSWER_BOUND_MS)
  t.same(wrong, [], `${polls.length} polls, each a 200 with the change, within the bound`)
  const waited = await waiting
  t.equal(waited.status, 200, `the waiting request: ${waited.status} ${waited.code ?? ''} after ${waited.ms} ms`)
  t.ok(waited.ids.includes(during), 'with the change')
  t.ok(waited.ms < 30_000, 'before the end of its wait')
  proxy.heal()
  const following = await timeUntil(() => hub.isRunning, RECOVERY_BOUND_MS)
  t.ok(following < Infinity, `the shared stream follows again ${following} ms later`)
  await sessions.insertOne({ project, name: 'after the damage' })
  await sessions.deleteOne({ project, name: 's0' })
  const converged = await timeUntil(async () => {
    if ((await answer(fastify, copy.url())).status !== 200) return false
    await copy.catchUp(get)
    return true
  }, RECOVERY_BOUND_MS)
  t.ok(converged < Infinity, 'the feed answers again')
  t.same(copy.sorted(), await listAll(get, `/projects/${String(project)}/sessions`), 'the copy equals the list')
})

t.test('a feed\'s own change stream opened on a reply without its cursor: ' +
  'a 503 within the bound, never a 500', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  await sessions.insertOne({ project, name: 's' })
  const get = async (url: string) => await fastify.inject(url)
  const copy = new FeedCopy(path)
  await copy.catchUp(get)
  let damaged = 0
  proxy.rewriteReply((command) => command.aggregate === 'sessions', (frame) => {
    frame[frame.indexOf('cursor\0')] ^= 0x20
    damaged++
  })
  const polled = await answer(fastify, copy.url())
  proxy.heal()
  t.ok(damaged >= 1, 'the reply that opens the feed\'s change stream was damaged')
  t.match(polled, { status: 503, code: 'DATABASE_UNAVAILABLE' })
  t.ok(polled.ms <= ANSWER_BOUND_MS, `answered in ${polled.ms} ms`)
  t.equal((await answer(fastify, copy.url())).status, 200, 'then served')
})
