// Two followers of one feed, one request each, share the read of a changed document when they
// can. A read that ran on the database before a change the second follower has gathered must
// not answer for it: that follower's token would move past the change with the older state,
// and its copy would keep, for good, a document the list no longer has.
import t from 'tap'
import { FeedCopy, listAll, requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'
import { until } from '../helpers/until.js'
import { feedFaultApp } from './fault-app.js'

const feeds = await requireChangeStreams(t)

t.test('a follower never joins a read older than a change it gathered', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  const { insertedId: id } = await sessions.insertOne({ project, name: 'kept' })
  const get = async (url: string) => await fastify.inject(url)
  const [first, second] = [new FeedCopy(path), new FeedCopy(path)]
  await first.catchUp(get)
  await second.catchUp(get)
  t.equal(first.next, second.next, 'both followers stand at the same point')

  const hub = fastify.changes.hub('sessions', true)
  const seen = (): number => hub.position().seq ?? 0
  const before = seen()
  await sessions.updateOne({ _id: id }, { $set: { name: 'renamed' } })
  t.ok(await until(() => seen() > before, 5000), 'the shared stream has the rename')

  // The first follower's read of the renamed document runs now; its reply is held back.
  const hold = proxy.holdReply((command) => command.find === 'sessions' && JSON.stringify(command.filter).includes('$in'))
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
  t.same(secondEvents.map((e) => [e.type, e._id]), [['remove', String(id)]], 'the second follower learns of the deletion')
  second.apply(JSON.parse(secondRes.body) as FeedAnswer)
  first.apply(JSON.parse(firstRes.body) as FeedAnswer)

  // Both copies then converge on the list (which no longer has the document).
  await first.catchUp(get)
  await second.catchUp(get)
  const listed = await listAll(get, `/projects/${String(project)}/sessions`)
  t.same(first.sorted(), listed, 'the first follower\'s copy equals the list')
  t.same(second.sorted(), listed, 'the second follower\'s copy equals the list')
})
