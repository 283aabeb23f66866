// The headers of a 304 (docs/conditional-requests.md, "For a cache in front"): the ETag and the Vary
// its 200 carries (RFC 9110 §15.4.5), whether the change stream or the body's digest decides it, for
// a list and its counts; no Content-Length, on GET as on HEAD (RFC 9110 §8.6). Every answer of a
// list and of its counts carries Vary: Accept-Encoding with COMPRESSION=on, compressed or not.
import { ObjectId } from 'mongodb'
import t, { type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { build } from '../helpers/build.js'
import { requireChangeStreams } from '../helpers/feeds.js'
import { uniqueDatabaseName } from '../helpers/database.js'
import { until } from '../helpers/until.js'

const feeds = await requireChangeStreams(t)
const ORIGIN = 'https://app.example.org'

/** Vary's fields, in lower case. */
const varyOf = (res: LightMyRequestResponse): string[] =>
  String(res.headers.vary ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')

/** An app with a project of three stewards: its list and its counts, small enough to go uncompressed. */
async function setUp (t: Test, config: Record<string, string>): Promise<{ app: FastifyInstance, urls: string[] }> {
  const app = await build(t, { config: { MONGODB_DB: uniqueDatabaseName('conditional-headers'), ...config } })
  const db = app.mongo.db as NonNullable<typeof app.mongo.db>
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'Headers' })
  await db.collection('stewards').insertMany(['Léa', 'Zoé', 'Émile'].map((name) => ({ project, name })))
  const list = `/projects/${project.toHexString()}/stewards`
  return { app, urls: [`${list}?sort=%2Bname&fields=name`, `${list}/counts?by=name`] }
}

const SETTINGS: Array<Record<string, string>> = [
  {}, { CORS_ORIGINS: ORIGIN }, { COMPRESSION: 'off' }, { COMPRESSION: 'off', CORS_ORIGINS: ORIGIN }
]

for (const config of SETTINGS) {
  const name = JSON.stringify(config)
  const compressed = config.COMPRESSION !== 'off'
  t.test(`${name}: a 304 carries its 200's Vary and ETag, and no Content-Length, GET or HEAD`, feeds, async (t) => {
    const { app, urls } = await setUp(t, config)
    const headers = { origin: ORIGIN, 'accept-encoding': 'gzip, br' }
    for (const url of urls) {
      const ok = await app.inject({ url, headers })
      t.equal(ok.statusCode, 200, url)
      t.ok(ok.rawPayload.length < 1024 && ok.headers['content-encoding'] === undefined, `${url}: not compressed`)
      const cors = config.CORS_ORIGINS === undefined ? [] : ['origin']
      const vary = [...cors, ...(compressed ? ['accept-encoding'] : [])]
      t.same(varyOf(ok), vary, `${url}: the 200's Vary`)
      // The first If-None-Match opens the stream; then an ETag names its point, and a 304 needs no query.
      const digestTag = ok.headers.etag as string
      await app.inject({ url, headers: { ...headers, 'if-none-match': digestTag } })
      t.ok(await until(async () =>
        ((await app.inject({ url, headers })).headers.etag as string).split('.').length === 4, 10_000),
      `${url}: an ETag with the stream's point`)
      const pointTag = (await app.inject({ url, headers })).headers.etag as string
      const ways: Array<[string, string]> = [['the body\'s digest', digestTag], ['the stream', pointTag], ['*', '*']]
      for (const [way, tag] of ways) {
        const got: LightMyRequestResponse[] = []
        for (const method of ['GET', 'HEAD'] as const) {
          const res = await app.inject({ method, url, headers: { ...headers, 'if-none-match': tag } })
          const what = `${url}, ${method}, decided by ${way}`
          t.equal(res.statusCode, 304, what)
          t.same(varyOf(res), vary, `${what}: the 200's Vary`)
          t.ok(res.headers.etag, `${what}: an ETag`)
          t.equal(res.headers['content-length'], undefined, `${what}: no Content-Length`)
          t.equal(res.headers['content-type'], undefined, `${what}: no Content-Type`)
          t.equal(res.rawPayload.length, 0, `${what}: no body`)
          got.push(res)
        }
        // The ETag's stream point is sealed afresh for every answer (lib/text-seal.ts): its digests are the same.
        const digests = (etag: unknown): string => String(etag).split('.').slice(0, 3).join('.')
        const [get, head] = got.map(({ headers }) =>
          ({ ...headers, date: undefined, 'x-request-id': undefined, etag: digests(headers.etag) }))
        t.same(head, get, `${url}, decided by ${way}: HEAD's headers are GET's`)
      }
    }
  })
}

t.test('COMPRESSION=on: every answer of the counts, compressed or not, carries Vary: Accept-Encoding', async (t) => {
  const { app, urls } = await setUp(t, {})
  const counts = urls[1] as string
  for (const encoding of [undefined, 'identity', 'gzip']) {
    const headers = encoding === undefined ? {} : { 'accept-encoding': encoding }
    const res = await app.inject({ url: counts, headers })
    t.equal(res.statusCode, 200)
    t.same(varyOf(res), ['accept-encoding'], `Accept-Encoding: ${String(encoding)}`)
  }
  const refused = await app.inject(counts.replace('by=name', 'by=nothing'))
  t.equal(refused.statusCode, 400)
  t.same(varyOf(refused), ['accept-encoding'], 'a problem too')
})
