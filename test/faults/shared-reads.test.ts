// Two followers of one feed, one request each, share the read of a changed document when they
// can. A read that ran on the database before a change the second follower has gathered must
// not answer for it: that follower's token would move past the change with the older state,
// and its copy would keep, for good, a document the list no longer has. And a waiting request
// whose token this replica cannot place hears of a change that came during its own read.
import type { Db } from 'mongodb'
import t from 'tap'
import { build } from '../helpers/build.js'
import { testDatabase, uniqueDatabaseName } from '../helpers/database.js'
import { FeedCopy, feedProject, listAll, requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'
import { until } from '../helpers/until.js'
import { unsealed } from '../../changes/feed-token.js'
import { ANSWER_BOUND_MS, QUERY_TIMEOUT_MS, SLACK_MS, feedFaultApp, proxiedDatabase } from './fault-app.js'

const feeds = await requireChangeStreams(t)

t.test('a follower never joins a read older than a change it gathered', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  const { insertedId: id } = await sessions.insertOne({ project, name: 'kept' })
  const get = async (url: string) => await fastify.inject(url)
  const [first, second] = [new FeedCopy(path), new FeedCopy(path)]
  await first.catchUp(get)
  await second.catchUp(get)
  // Tokens are sealed afresh each time: the points they hold are compared.
  const point = (token: string | undefined): string => unsealed(fastify.textSeal, token ?? '')
  t.equal(point(first.next), point(second.next), 'both followers stand at the same point')

  const hub = fastify.changes.hub('sessions', true)
  const seen = (): number => hub.position().seq ?? 0
  const before = seen()
  await sessions.updateOne({ _id: id }, { $set: { name: 'renamed' } })
  t.ok(await until(() => seen() > before, 5000), 'the shared stream has the rename')

  // The first follower's read of the renamed document runs now; its reply is held back.
  const hold = proxy.holdReply((command) => command.find === 'sessions' &&
    JSON.stringify(command.filter).includes('$in'))
  const firstAnswer = get(first.url())
  await hold.held
  const afterRename = seen()
  await sessions.deleteOne({ _id: id })
  t.ok(await until(() => seen() > afterRename, 5000), 'the shared stream has the deletion')

  // The second follower has gathered the deletion too: it must read on its own.
  const secondRes = await get(second.url())
  hold.release()
  const firstRes = await firstAnswer
  t.equal(secondRes.statusCode, 200)
  t.equal(firstRes.statusCode, 200)
  const secondEvents = (JSON.parse(secondRes.body) as FeedAnswer).events
  t.same(secondEvents.map((e) => [e.type, e._id]), [['remove', String(id)]],
    'the second follower learns of the deletion')
  second.apply(JSON.parse(secondRes.body) as FeedAnswer)
  first.apply(JSON.parse(firstRes.body) as FeedAnswer)

  // Both copies then converge on the list (which no longer has the document).
  await first.catchUp(get)
  await second.catchUp(get)
  const listed = await listAll(get, `/projects/${String(project)}/sessions`)
  t.same(first.sorted(), listed, 'the first follower\'s copy equals the list')
  t.same(second.sorted(), listed, 'the second follower\'s copy equals the list')
})

t.test('a wait on a token this replica cannot place answers a change the shared stream brought ' +
  'during its own read', feeds, async (t) => {
  const config = {
    CURSOR_SECRET: 'a-shared-reads-secret-of-32-bytes-or-more',
    MONGODB_DB: uniqueDatabaseName('placed'),
    QUERY_TIMEOUT_MS
  }
  const proxy = await proxiedDatabase(t)
  const elsewhere = await build(t, { config, databaseUri: (await testDatabase()).uri })
  const db = elsewhere.mongo.db as Db
  const { project, path } = await feedProject(db, 'sessions')
  // The token comes from another replica: this one has seen no change of the collection.
  const copy = new FeedCopy(path)
  await copy.catchUp(async (url) => await elsewhere.inject(url))
  const here = await build(t, { config, databaseUri: proxy.uri })
  const hub = here.changes.hub('sessions', true)

  // Its read of its own from the token: the getMore that finds it caught up (its wait is 10 ms,
  // the shared stream's 1 s) ran on the database; the reply is held back meanwhile.
  const held = proxy.holdReply((command) => command.getMore !== undefined && command.collection === 'sessions' &&
    Number(command.maxTimeMS) < 1000)
  t.teardown(() => { held.release() })
  const started = Date.now()
  const waiting = here.inject(copy.url('wait=30'))
  await held.held
  t.ok(await until(() => hub.isRunning, ANSWER_BOUND_MS), 'the shared stream follows the collection')
  const mark = hub.mark()
  const changed = String((await db.collection('sessions').insertOne({ project, name: 'during the read' })).insertedId)
  t.ok(await until(() => hub.changedSince(mark, String(project)), ANSWER_BOUND_MS),
    'and has brought the change, before the read ended')
  held.release()
  let timer: NodeJS.Timeout | undefined
  const answer = await Promise.race([waiting, new Promise<undefined>((resolve) => {
    timer = setTimeout(() => { resolve(undefined) }, ANSWER_BOUND_MS + SLACK_MS)
  })])
  clearTimeout(timer)
  t.ok(answer !== undefined, `answered ${Date.now() - started} ms after it was asked, not at the end of its 30 s wait`)
  t.same((answer?.json() as FeedAnswer | undefined)?.events.map((event) => event._id), [changed], 'with the change')
})
