import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Db } from 'mongodb'
import t from 'tap'
import { TICK_MS } from '../../database/readiness.js'
import { start } from '../../offline-mongodb/server.js'
import { SLACK_MS } from '../faults/fault-app.js'
import { build } from '../helpers/build.js'
import { prepareFeeds } from '../helpers/feeds.js'
import { timeUntil } from '../helpers/until.js'
import { NESTED_LISTS } from '../helpers/lists.js'

t.test('GET /health answers while the process lives', async (t) => {
  const fastify = await build(t)
  const res = await fastify.inject('/health')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ok' })
})

t.test('GET /ready answers 200 when the database answers a ping', async (t) => {
  const fastify = await build(t)
  const res = await fastify.inject('/ready')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { status: 'ready' })
})

/** How often readyUntil() asks. */
const ASK_EVERY_MS = 50
/**
 * A database gone away closes its connections and refuses new ones: the ping under way fails, or
 * the watchdog's next, TICK_MS after the last ended, fails at once (docs/operations.md, "Readiness
 * answers at once"). It is seen at the next question, within scheduling noise.
 */
const GONE_BOUND_MS = TICK_MS + ASK_EVERY_MS + SLACK_MS

/**
 * Asks /ready until it answers `status`, within `withinMs`: its last answer, and how long it took
 * (Infinity: not within).
 */
async function readyUntil (
  fastify: FastifyInstance, status: number, withinMs: number
): Promise<{ res: LightMyRequestResponse, ms: number }> {
  let res: LightMyRequestResponse | undefined
  const ms = await timeUntil(async () => (res = await fastify.inject('/ready')).statusCode === status,
    withinMs, ASK_EVERY_MS)
  return { res: res as LightMyRequestResponse, ms }
}

t.test('GET /ready answers 503 problem+json by the watchdog\'s next ping after the database goes away', async (t) => {
  const db = await start()
  const fastify = await build(t, { databaseUri: db.uri })
  t.equal((await fastify.inject('/ready')).statusCode, 200)
  await db.close()
  const { res, ms } = await readyUntil(fastify, 503, GONE_BOUND_MS)
  t.equal(res.statusCode, 503, `503 after ${ms} ms (bound ${GONE_BOUND_MS} ms)`)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.match(res.json(), { status: 503, code: 'DATABASE_UNAVAILABLE', title: 'Service Unavailable' })
  t.equal((await fastify.inject('/health')).statusCode, 200, 'liveness does not depend on the database')
})

t.test('/ready logs a change of state once, at info, and no fault for its 503s', async (t) => {
  const db = await start()
  const logLines: Array<Record<string, unknown>> = []
  const fastify = await build(t, { databaseUri: db.uri, logLines })
  t.equal((await fastify.inject('/ready')).statusCode, 200)
  await db.close()
  t.equal((await readyUntil(fastify, 503, GONE_BOUND_MS)).res.statusCode, 503)
  for (let i = 0; i < 5; i++) t.equal((await fastify.inject('/ready')).statusCode, 503)
  fastify.lifecycle.draining = true
  for (let i = 0; i < 3; i++) t.equal((await fastify.inject('/ready')).statusCode, 503)
  const about = logLines.filter((line) => /\/ready/.test(String(line.msg)))
  t.equal(about.length, 2, 'one line per change')
  t.match(about[0]?.msg,
    /^\/ready answers 503: the (database does not answer a ping|driver reaches no server of the database)$/)
  t.equal(about[1]?.msg, '/ready answers 503: the service is shutting down')
  t.ok(about.every((line) => line.level === 30), 'at info')
  t.same(logLines.filter((line) => line.msg === 'database fault' ||
    ((line.level as number) >= 40 && /ready/i.test(JSON.stringify(line)))), [], 'no warning about /ready')
})

t.test('GET / points to the docs, the OpenAPI document, the lists, the probes and the change feeds', async (t) => {
  const { PACKAGE } = await import('../../lib/package-info.js')
  const fastify = await build(t)
  const res = await fastify.inject('/')
  t.equal(res.statusCode, 200)
  const index = res.json()
  t.same({ name: index.name, version: index.version }, { name: PACKAGE.name, version: PACKAGE.version })
  for (const [name, link] of Object.entries(index.links as Record<string, string>)) {
    const target = await fastify.inject(link)
    t.equal(target.statusCode, 200, `${name}: ${link} answers`)
  }
  t.same(index.feeds, ['/projects/changes', ...NESTED_LISTS.map((kind) => `/projects/{projectId}/${kind}/changes`)],
    'a change feed for every list')
  const db = fastify.mongo.db as Db
  await prepareFeeds(db)
  const { insertedId: project } = await db.collection('projects').insertOne({ name: 'P' })
  for (const feed of index.feeds as string[]) {
    t.equal((await fastify.inject(feed.replace('{projectId}', project.toHexString()))).statusCode, 200,
      `${feed} answers`)
  }
  const behind = await build(t, { config: { PUBLIC_URL: 'https://api.example.org/listing' } })
  const behindIndex = (await behind.inject('/')).json()
  t.equal(behindIndex.links.docs, 'https://api.example.org/listing/docs', 'behind a proxy, the public links')
  t.equal(behindIndex.feeds[0], 'https://api.example.org/listing/projects/changes', 'and feeds')
})
