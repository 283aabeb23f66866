// A database that is slow but answers is not an outage: when every reply takes
// up to QUERY_TIMEOUT_MS / 2, every request gets its 200, 50 at a time, from a cold start (the
// service started while the database was already slow) as well as warm, and /ready stays 200;
// from a cold start, a feed's first polls too. The service runs as `npm start` runs it, behind
// the fault proxy that delays every reply.
import { MongoClient, ObjectId } from 'mongodb'
import t from 'tap'
import { seedDemoData } from '../../demo-data/seed.js'
import { ANSWER_MARGIN_MS } from '../../plugins/mongodb.js'
import { testDatabase, uniqueDatabaseName } from '../helpers/database.js'
import { prepareFeeds, requireChangeStreams } from '../helpers/feeds.js'
import { NESTED_LISTS } from '../helpers/lists.js'
import { RECOVERY_BOUND_MS, SLACK_MS, proxiedDatabase } from './fault-app.js'
import { get, startService, expectReady, untilReady } from './service-process.js'
import { timeUntil, until } from '../helpers/until.js'

const feeds = await requireChangeStreams(t)
t.setTimeout(180_000)
const QUERY_TIMEOUT_MS = 2000
const DELAY_MS = QUERY_TIMEOUT_MS / 2
const CONCURRENCY = 50

const proxy = await proxiedDatabase(t)
const MONGODB_DB = uniqueDatabaseName('slow')
const counts = await seedDemoData(`mongodb://127.0.0.1:${proxy.port}/?directConnection=true`, MONGODB_DB)
t.ok(counts.projects > 0, 'demo data')

interface Outcome { status: number, code?: string, ms: number }

async function burst (base: string, urls: string[]): Promise<Outcome[]> {
  return await Promise.all(Array.from({ length: CONCURRENCY }, async (_, i) => {
    const started = Date.now()
    const res = await get(`${base}${urls[i % urls.length] as string}`)
    return { status: res.status, code: res.body?.code as string | undefined, ms: Date.now() - started }
  }))
}

const summary = (outcomes: Outcome[]): string => {
  const failed = outcomes.filter((o) => o.status !== 200)
  const ms = outcomes.map((o) => o.ms).sort((a, b) => a - b)
  return `${outcomes.length - failed.length}/${outcomes.length} 200, slowest ${ms[ms.length - 1] ?? 0} ms` +
    `${failed.length === 0 ? '' : `; failed: ${failed.map((o) => `${o.status} ${o.code ?? ''}`).join(', ')}`}`
}

t.test(`every reply delayed ${DELAY_MS} ms (QUERY_TIMEOUT_MS / 2): ` +
  `${CONCURRENCY} concurrent requests all 200, cold and warm`, async (t) => {
  proxy.slow(DELAY_MS)
  const service = await startService({
    MONGODB_URI: proxy.uri, MONGODB_DB, QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), SHUTDOWN_DELAY_MS: '0'
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  // It listens at once and opens its pool meanwhile: traffic comes when /ready says so, as
  // from a load balancer. The pool is as cold as a start leaves it (minPoolSize connections).
  const readyAfter = await untilReady(service.url, 4 * QUERY_TIMEOUT_MS)
  t.ok(readyAfter < Infinity, `ready ${readyAfter} ms after it listened`)
  // Projects the service has not seen: each nested list must also learn that its project exists.
  const projects = ((await get(`${service.url}/projects?limit=100&fields=_id`))
    .body?.data as Array<{ _id: string }> | undefined ?? []).map((p) => p._id)
  t.ok(projects.length >= 3, `${projects.length} projects`)
  const urls = projects.flatMap((id) => NESTED_LISTS.map((list) => `/projects/${id}/${list}?limit=20`))

  const cold = await burst(service.url, urls)
  t.ok(cold.every((o) => o.status === 200), `cold: ${summary(cold)}`)
  const ready = await Promise.all([0, 1, 2].map(async () => (await get(`${service.url}/ready`)).status))
  t.same(ready, [200, 200, 200], '/ready is 200 while the database answers pings, however slowly')
  const warm = await burst(service.url, urls.map((url) => `${url}&count=true`))
  t.ok(warm.every((o) => o.status === 200), `warm, with counts: ${summary(warm)}`)
  t.notOk(service.lines.some((line) => /replaced the client/.test(line)),
    'the watchdog never took slowness for a stuck client')

  proxy.heal()
  // Replies that came while it was slow are still held for their delay; the next ones pass at once.
  t.ok(await until(() => proxy.delayed() === 0, DELAY_MS + SLACK_MS), 'no reply is held any more')
  // Every request waits for a reply at least: one still held would take DELAY_MS. That is the
  // whole room for a busy machine, since a healed request waits for no delay at all.
  const fast = await burst(service.url, urls)
  t.ok(fast.every((o) => o.status === 200 && o.ms < DELAY_MS), `healed, each under DELAY_MS: ${summary(fast)}`)
})

t.test('replies slower than the query budget: bounded 503s, and 200s again once the database is fast', async (t) => {
  const service = await startService({
    MONGODB_URI: proxy.uri, MONGODB_DB, QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), SHUTDOWN_DELAY_MS: '0'
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  await expectReady(t, service.url, 4 * QUERY_TIMEOUT_MS)
  t.equal((await get(`${service.url}/projects?limit=1`)).status, 200)
  proxy.slow(QUERY_TIMEOUT_MS * 2)
  const slow = await burst(service.url, ['/projects?limit=5'])
  t.ok(slow.every((o) => o.status === 503 && o.ms <= QUERY_TIMEOUT_MS + ANSWER_MARGIN_MS),
    `too slow, each answered within QUERY_TIMEOUT_MS + ${ANSWER_MARGIN_MS} ms: ${summary(slow)}`)
  proxy.heal()
  const recovered = await timeUntil(async () => (await get(`${service.url}/projects?limit=5`)).status === 200,
    RECOVERY_BOUND_MS + SLACK_MS, 200)
  t.ok(recovered <= RECOVERY_BOUND_MS, `serving again ${recovered} ms after the delay was removed`)
})

// Here, not beside the other feed cases: a first listing from a fresh start is two round trips one
// after the other (the collection's stream opened, then its page), the whole budget at this delay.
t.test('started on a slow database: once /ready is 200, a feed\'s first polls are 200', feeds, async (t) => {
  const proxy = await proxiedDatabase(t)
  const MONGODB_DB = uniqueDatabaseName('slow-start')
  // The collections (with their images) and the projects, made before the service starts.
  const direct = await new MongoClient((await testDatabase()).uri).connect()
  t.teardown(async () => { await direct.db(MONGODB_DB).dropDatabase().catch(() => {}); await direct.close() })
  const db = direct.db(MONGODB_DB)
  await prepareFeeds(db)
  const projects = [new ObjectId(), new ObjectId()]
  await db.collection('projects').insertMany(projects.map((_id, i) => ({ _id, name: `P${i}` })))
  // Each project has documents of both kinds: a first listing that finds none reads on (docs/operations.md).
  const documents = projects.flatMap((project) => [{ project, name: 'a' }, { project, name: 'b' }])
  for (const kind of ['sessions', 'teams']) await db.collection(kind).insertMany(documents.map((doc) => ({ ...doc })))
  proxy.slow(DELAY_MS)
  t.teardown(() => { proxy.heal() })
  const service = await startService({
    MONGODB_URI: proxy.uri, MONGODB_DB, QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS), SHUTDOWN_DELAY_MS: '0'
  })
  t.teardown(() => { service.child.kill('SIGKILL') })
  // The same start as the lists' above: /ready waits for the feeds' start-up check in both.
  await expectReady(t, service.url, 4 * QUERY_TIMEOUT_MS)
  // At once, the first poll of two collections' feeds for each project: a listing of each.
  const urls = projects.flatMap((project) =>
    ['sessions', 'teams'].map((kind) => `${service.url}/projects/${String(project)}/${kind}/changes?limit=1`))
  const first = await Promise.all(urls.map(async (url): Promise<Outcome> => {
    const started = Date.now()
    const res = await get(url)
    return { status: res.status, code: res.body?.code as string | undefined, ms: Date.now() - started }
  }))
  t.ok(first.every((o) => o.status === 200), `the first polls: ${summary(first)}`)
})
