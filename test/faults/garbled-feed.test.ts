// A change stream's reply damaged on the way (a getMore's reply that does not decode): feed
// requests answer within the bound (200 or 503, never a 500), the shared stream follows again
// from its last token, and a follower converges on its list without a change lost.
import t from 'tap'
import { FeedCopy, listAll, requireChangeStreams } from '../helpers/feeds.js'
import { timeUntil } from '../helpers/until.js'
import { ANSWER_BOUND_MS, RECOVERY_BOUND_MS, SLACK_MS, feedFaultApp, timed, type Timed } from './fault-app.js'
import { REPLY_DOCUMENT_AT } from './fault-proxy.js'

const feeds = await requireChangeStreams(t)
t.setTimeout(120_000)

t.test('a damaged getMore reply of the collection\'s change streams: bounded answers, then the stream follows again and nothing is lost', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  await sessions.insertMany(Array.from({ length: 3 }, (_, i) => ({ project, name: `s${i}` })))
  const get = async (url: string) => await fastify.inject(url)
  const copy = new FeedCopy(path)
  await copy.catchUp(get)
  const hub = fastify.changes.hub('sessions', true)
  t.ok(hub.isRunning, 'the shared stream follows the collection')

  // A request waits on the stream for a change made meanwhile.
  const waiting = timed(fastify, copy.url('wait=30'))
  t.ok(await timeUntil(() => hub.waiting === 1, ANSWER_BOUND_MS + SLACK_MS) < Infinity, 'a request waits on the shared stream')
  // The next getMore of a change stream on the collection (the shared one, or a waiting
  // request's read) comes back with the first element of its reply of an unknown type.
  let damaged = 0
  proxy.rewriteReply((command) => command.getMore !== undefined && command.collection === 'sessions', (frame) => {
    frame[REPLY_DOCUMENT_AT + 4] = 0x20
    damaged++
  })
  await sessions.insertOne({ project, name: 'during the damage' })
  // Polls while the stream meets the damage, and a few after it.
  const polls: Timed[] = []
  let after = 0
  await timeUntil(async () => {
    polls.push(await timed(fastify, copy.url()))
    if (damaged > 0) after++
    return after >= 5
  }, RECOVERY_BOUND_MS, 50)
  t.equal(damaged, 1, 'a getMore reply was damaged')
  const unbounded = polls.filter((poll) => !(poll.status === 200 || (poll.status === 503 && poll.retryAfter === '1')) || poll.ms > ANSWER_BOUND_MS + SLACK_MS)
  t.same(unbounded, [], `${polls.length} polls, each a 200 or a 503 with Retry-After, within the bound`)
  const waited = await waiting
  t.ok(waited.status === 200 || (waited.status === 503 && waited.retryAfter === '1'), `the waiting request: ${waited.status} ${waited.code ?? ''} after ${waited.ms} ms`)
  t.ok(waited.ms < 30_000, 'before the end of its wait')
  proxy.heal()
  const following = await timeUntil(() => hub.isRunning, RECOVERY_BOUND_MS)
  t.ok(following < Infinity, `the shared stream follows again ${following} ms later`)
  await sessions.insertOne({ project, name: 'after the damage' })
  await sessions.deleteOne({ project, name: 's0' })
  const converged = await timeUntil(async () => {
    const answer = await timed(fastify, copy.url())
    if (answer.status !== 200) return false
    await copy.catchUp(get)
    return true
  }, RECOVERY_BOUND_MS)
  t.ok(converged < Infinity, 'the feed answers again')
  t.same(copy.sorted(), await listAll(get, `/projects/${String(project)}/sessions`), 'the copy equals the list')
})
