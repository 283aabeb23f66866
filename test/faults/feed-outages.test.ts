// Change feeds while the database misbehaves: every feed request, waiting ones too, answers
// within the bound (503, never a hang or a 500); after the outage the shared stream follows again
// and a follower converges on its list, without a change lost in between.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { FeedCopy, listAll, requireChangeStreams } from '../helpers/feeds.js'
import { build } from '../helpers/build.js'
import { clientOfTestDatabase } from '../helpers/database.js'
import { ANSWER_BOUND_MS, QUERY_TIMEOUT_MS, RECOVERY_BOUND_MS, SLACK_MS, feedFaultApp, proxiedDatabase, sleep } from './fault-app.js'

const feeds = await requireChangeStreams(t)

t.setTimeout(120_000)

t.test('outage and silence: feeds answer in bounds, then converge', feeds, async (t) => {
  const { proxy, fastify, project, sessions, path } = await feedFaultApp(t)
  await sessions.insertMany(Array.from({ length: 5 }, (_, i) => ({ project, name: `s${i}` })))
  const get = async (url: string) => await fastify.inject(url)
  const copy = new FeedCopy(path)
  await copy.catchUp(get)

  for (const fault of ['outage', 'blackhole'] as const) {
    const waiting = (async () => {
      const started = Date.now()
      const res = await get(copy.url('wait=30'))
      return { status: res.statusCode, code: res.statusCode === 200 ? undefined : (JSON.parse(res.body) as { code: string }).code, ms: Date.now() - started }
    })()
    await sleep(300)
    proxy[fault]()
    const polled = Date.now()
    const res = await get(copy.url())
    const ms = Date.now() - polled
    t.equal(res.statusCode, 503, `${fault}: a poll is 503`)
    t.ok(ms <= ANSWER_BOUND_MS + SLACK_MS, `${fault}: answered in ${ms} ms`)
    const waited = await waiting
    t.ok(waited.status === 200 || waited.status === 503, `${fault}: the waiting request answered ${waited.status} ${waited.code ?? ''} after ${waited.ms} ms`)
    t.ok(waited.ms <= 30_000 + ANSWER_BOUND_MS + SLACK_MS, 'within its wait and the bound')
    proxy.heal()
    // Written while the service may not have its stream back yet: the token goes on from before.
    const recovered = Date.now()
    let ok = false
    while (!ok && Date.now() - recovered < RECOVERY_BOUND_MS + 5000) {
      ok = (await get(copy.url())).statusCode === 200
      if (!ok) await sleep(200)
    }
    t.ok(ok, `${fault}: the feed answers again after ${Date.now() - recovered} ms`)
    await sessions.insertOne({ project, name: `after ${fault}` })
    await sessions.deleteOne({ project, name: 's0' })
    await copy.catchUp(get)
    t.same(copy.sorted(), await listAll(get, `/projects/${String(project)}/sessions`), `${fault}: the copy equals the list`)
  }
})

t.test('a silent database: the check of whether a collection can have a feed is bounded like any command', async (t) => {
  const proxy = await proxiedDatabase(t)
  // Without pre- and post-images, a collection is checked again at each feed request.
  const { db } = await clientOfTestDatabase('feed_check')
  await db.createCollection('sessions', { changeStreamPreAndPostImages: { enabled: false } })
  const fastify = await build(t, { databaseUri: proxy.uri, config: { QUERY_TIMEOUT_MS, MONGODB_DB: db.databaseName } })
  const path = `/projects/${String(new ObjectId())}/sessions/changes`
  t.match(JSON.parse((await fastify.inject(path)).body), { status: 503, code: 'CHANGES_UNAVAILABLE', detail: /sessions/ }, 'checked while it answers')
  proxy.blackhole()
  const started = Date.now()
  const res = await fastify.inject(path)
  const ms = Date.now() - started
  t.equal(res.statusCode, 503, `a silent database: ${(JSON.parse(res.body) as { code: string }).code}`)
  t.ok(ms <= ANSWER_BOUND_MS + SLACK_MS, `answered in ${ms} ms`)
  proxy.heal()
})
