// A token names the history it belongs to: one taken to a database that replaced the first (the
// same service, the same secret, the same project, another database) answers 410 at once, never a
// resume into the other history, which would miss every change of the listing it never made.
import type { Db } from 'mongodb'
import { ObjectId } from 'mongodb'
import t from 'tap'
import { build } from '../helpers/build.js'
import { FeedCopy, prepareFeeds, requireChangeStreams } from '../helpers/feeds.js'

const feeds = await requireChangeStreams(t)

const CURSOR_SECRET = 'a shared secret of at least thirty-two bytes'

t.test('a token of a replaced database is 410 at once', feeds, async (t) => {
  const project = new ObjectId()
  const path = `/projects/${String(project)}/sessions/changes`
  const apps = []
  for (const name of ['first', 'replacement']) {
    const fastify = await build(t, { config: { CURSOR_SECRET } })
    const db = fastify.mongo.db as Db
    await prepareFeeds(db)
    await db.collection('projects').insertOne({ _id: project, name })
    await db.collection('sessions').insertOne({ project, name: `${name}'s session` })
    apps.push(fastify)
  }
  const [first, replacement] = apps as [typeof apps[0], typeof apps[0]]
  const copy = new FeedCopy(path)
  await copy.catchUp(async (url) => await first.inject(url))
  t.equal(copy.documents.size, 1)

  const res = await replacement.inject(copy.url())
  t.equal(res.statusCode, 410, 'the replacement refuses the token')
  t.equal((res.json() as { code: string }).code, 'CHANGES_EXPIRED')
  const fresh = new FeedCopy(path)
  await fresh.catchUp(async (url) => await replacement.inject(url))
  t.same([...fresh.documents.values()].map((doc) => doc.name), ['replacement\'s session'],
    'listing again gives the new history')
})
