// A feed's answers are never reused (docs/changes.md): each is `Cache-Control: no-store`, and
// carries `Vary: Accept` (JSON or a stream, as Accept chooses) beside `Origin` (CORS) and, with
// COMPRESSION=on, `Accept-Encoding`, compressed or not; each field once.
import { ObjectId, type Db } from 'mongodb'
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { build } from '../helpers/build.js'
import { prepareFeeds, requireChangeStreams } from '../helpers/feeds.js'

const feeds = await requireChangeStreams(t)
const ORIGIN = 'https://app.example.org'

/** Vary's fields, in lower case and in order. */
const varyOf = (res: LightMyRequestResponse): string[] =>
  String(res.headers.vary ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')

async function setUp (t: Test, config: Record<string, string>): Promise<{ app: FastifyInstance, feed: string }> {
  const app = await build(t, { config: { CURSOR_SECRET: 'a-feed-test-secret-of-32-bytes-at-least', ...config } })
  const db = app.mongo.db as Db
  await prepareFeeds(db)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'Headers' })
  // Enough for an answer over 1 KiB at limit=100, and one under it at limit=1.
  await db.collection('stewards').insertMany(Array.from({ length: 40 }, (_, i) => ({
    project, name: `Steward ${String(i).padStart(2, '0')}`, email: `steward${i}@example.org`
  })))
  return { app, feed: `/projects/${String(project)}/stewards/changes` }
}

const SETTINGS: Array<Record<string, string>> = [{}, { CORS_ORIGINS: ORIGIN }, { COMPRESSION: 'off' }]

for (const config of SETTINGS) {
  const compressed = config.COMPRESSION !== 'off'
  const vary = [
    ...(config.CORS_ORIGINS === undefined ? [] : ['origin']), ...(compressed ? ['accept-encoding'] : []), 'accept'
  ]
  const name = `${JSON.stringify(config)}: every feed answer is no-store, with Vary: ${vary.join(', ')}`
  t.test(name, feeds, async (t) => {
    const { app, feed } = await setUp(t, config)
    const headers = { origin: ORIGIN, 'accept-encoding': 'gzip' }
    const check = (res: LightMyRequestResponse, what: string): void => {
      t.equal(res.statusCode, 200, what)
      t.equal(res.headers['cache-control'], 'no-store', `${what}: no-store`)
      t.same(varyOf(res), vary, `${what}: Vary`)
    }
    const small = await app.inject({ url: `${feed}?limit=1`, headers })
    check(small, 'JSON under 1 KiB')
    t.equal(small.headers['content-encoding'], undefined, 'not compressed')
    const large = await app.inject({ url: `${feed}?limit=100`, headers })
    check(large, 'JSON over 1 KiB')
    t.equal(large.headers['content-encoding'], compressed ? 'gzip' : undefined)
    const head = await app.inject({ method: 'HEAD', url: `${feed}?limit=1`, headers })
    check(head, 'HEAD')
    t.same({ ...head.headers, date: undefined, 'x-request-id': undefined, link: undefined },
      { ...small.headers, date: undefined, 'x-request-id': undefined, link: undefined }, 'HEAD\'s headers are GET\'s')
    const stream = { ...headers, accept: 'application/x-ndjson' }
    check(await app.inject({ method: 'HEAD', url: feed, headers: stream }), 'a stream\'s HEAD')
    check(await app.inject({ url: '/projects/changes?limit=1', headers }), '/projects/changes')
    // A long poll: the listing done, nothing happens for a second.
    const { next } = (await app.inject(`${feed}?limit=100`)).json<{ next: string }>()
    const polled = await app.inject({ url: `${feed}?since=${next}&wait=1`, headers })
    check(polled, 'a long poll')
    t.same(polled.json<{ events: unknown[] }>().events, [], 'that waited for nothing')
    for (const [url, status] of [[`${feed}?limit=0`, 400], [`${feed}?since=x`, 400],
      [`/projects/${String(new ObjectId())}/stewards/changes`, 404]] as const) {
      const refused = await app.inject({ url, headers })
      t.equal(refused.statusCode, status, `${url}: refused`)
      t.equal(refused.headers['cache-control'], 'no-store', `${url}: a refusal is no-store too`)
    }
    const post = await app.inject({ method: 'POST', url: feed, headers })
    t.match([post.statusCode, post.headers['cache-control']], [405, 'no-store'], 'a 405 too')
  })
}
