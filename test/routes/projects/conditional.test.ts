// Conditional requests (docs/conditional-requests.md): a weak ETag on every 200 of a list and of
// its counts, the same in every encoding; If-None-Match answered 304 exactly when the body would be
// the same; without reading the collection when its change stream says nothing of the project
// changed; understood by another replica; not counted against the rate limit.
import { createHash } from 'node:crypto'
import { ObjectId, type Document } from 'mongodb'
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { build } from '../../helpers/build.js'
import { requireChangeStreams } from '../../helpers/feeds.js'
import { testDatabase, uniqueDatabaseName } from '../../helpers/database.js'
import { until } from '../../helpers/until.js'

const feeds = await requireChangeStreams(t)
const config = { MONGODB_DB: uniqueDatabaseName('conditional'), CURSOR_SECRET: 'e'.repeat(32) }
const [a, b] = [await build(t, { config }), await build(t, { config })] as [FastifyInstance, FastifyInstance]
const db = a.mongo.db as NonNullable<typeof a.mongo.db>
const project = new ObjectId()
const elsewhere = new ObjectId()
await db.collection('projects').insertMany([{ _id: project, name: 'Cond' }, { _id: elsewhere, name: 'Other' }])
await db.collection('stewards').insertMany(['Léa', 'Zoé', 'Émile'].map((name) => ({ project, name })))
const url = `/projects/${project.toHexString()}/stewards?sort=%2Bname&fields=name`

/** The commands each replica sends to the collection, by name. */
function watch (app: FastifyInstance): Array<{ name: string, pipeline?: Document[] }> {
  const seen: Array<{ name: string, pipeline?: Document[] }> = []
  app.database.client().on('commandStarted', (event) => {
    if (event.command[event.commandName] === 'stewards') {
      seen.push({ name: event.commandName, pipeline: event.command.pipeline })
    }
  })
  return seen
}
const reads = (seen: Array<{ name: string, pipeline?: Document[] }>): string[] =>
  seen.filter((c) => c.name === 'find' || (c.name === 'aggregate' && !('$changeStream' in (c.pipeline?.[0] ?? {}))))
    .map((c) => c.name)

t.test('a weak ETag on every 200, the same in every encoding; If-None-Match gives 304 with no body', async (t) => {
  const first = await a.inject(url)
  const etag = first.headers.etag as string
  t.match(etag, /^W\/"v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/, 'weak')
  t.equal(first.headers['cache-control'], 'no-cache')
  for (const encoding of ['gzip', 'br', 'identity']) {
    t.equal((await a.inject({ url: `${url}&limit=1000`, headers: { 'accept-encoding': encoding } })).headers.etag,
      (await a.inject({ url: `${url}&limit=1000` })).headers.etag, encoding)
  }
  const again = await a.inject({ url, headers: { 'if-none-match': etag } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.ok(again.headers.etag, 'the 304 names the current validator')
  const head = await a.inject({ method: 'HEAD', url, headers: { 'if-none-match': etag } })
  t.equal(head.statusCode, 304, 'HEAD too')
  const other = await a.inject({ url: `${url}&limit=2`, headers: { 'if-none-match': etag } })
  t.equal(other.statusCode, 200, 'another answer (limit=2) is not that one')
  const any = await a.inject({ url, headers: { 'if-none-match': ' * ' } })
  t.equal(any.statusCode, 304, 'If-None-Match: * matches the answer there is')
  const digests = (tag: string): string[] => tag.replace(/"$/, '').split('.').slice(1, 3)
  t.same(digests(any.headers.etag as string), digests(etag),
    'and names it (its body and request; the stream\'s point may be newer)')
  t.equal((await a.inject({
    url: `/projects/${new ObjectId().toHexString()}/stewards`, headers: { 'if-none-match': '*' }
  })).statusCode, 404, 'no project: no answer to match')
  t.equal((await a.inject({ url: `${url}&limit=x`, headers: { 'if-none-match': '*' } })).statusCode, 400,
    'a bad request stays one')
  t.equal((await a.inject({
    url, headers: { 'if-none-match': `${etag.replace('v2.', 'v2.x')}, W/"other"` }
  })).statusCode, 200, 'tags that name no answer of this request')
  const counts = await a.inject(`/projects/${project.toHexString()}/stewards/counts?by=name`)
  t.equal((await a.inject({
    url: `/projects/${project.toHexString()}/stewards/counts?by=name`,
    headers: { 'if-none-match': counts.headers.etag as string }
  })).statusCode, 304, 'counts too')
})

t.test('If-Match compares strongly: no tag of the service passes it (412, decided first), * does', async (t) => {
  const paged = `${url}&limit=1`
  const etag = String((await a.inject(paged)).headers.etag)
  const counts = `/projects/${project.toHexString()}/stewards/counts?by=name`
  for (const header of [etag, etag.slice(2), '"x"', `"x", ${etag}`]) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await a.inject({ method, url: paged, headers: { 'if-match': header, 'if-none-match': etag } })
      t.equal(res.statusCode, 412, `${method} If-Match: ${header}`)
      t.equal(res.headers.link, undefined, 'no next page offered')
      if (method === 'GET') t.match(res.json(), { code: 'PRECONDITION_FAILED', errors: [{ param: 'if-match' }] })
    }
  }
  t.equal((await a.inject({ url: counts, headers: { 'if-match': '"x"' } })).statusCode, 412, 'counts too')
  t.equal((await a.inject({ url: paged, headers: { 'if-match': ' * ' } })).statusCode, 200, '* asks for an answer')
  t.equal((await a.inject({ url: paged, headers: { 'if-match': '*', 'if-none-match': etag } })).statusCode, 304,
    'then If-None-Match decides')
  t.equal((await a.inject({ url: `${paged}&skip=-1`, headers: { 'if-match': '"x"' } })).statusCode, 400,
    'a request refused anyway ignores its preconditions (RFC 9110, 13.2.1)')
})

t.test('a change in the answer is a 200; a change elsewhere a 304, ' +
  'without reading the collection', feeds, async (t) => {
  const seen = watch(a)
  // The first If-None-Match opens the collection's stream; the next answers carry its point.
  let etag = (await a.inject(url)).headers.etag as string
  await a.inject({ url, headers: { 'if-none-match': etag } })
  t.ok(await until(async () => ((await a.inject(url)).headers.etag as string).split('.').length === 4, 10_000),
    'the ETag carries the stream\'s point')
  etag = (await a.inject(url)).headers.etag as string
  await db.collection('stewards').insertOne({ project: elsewhere, name: 'Ailleurs' })
  seen.length = 0
  const cheap = await a.inject({ url, headers: { 'if-none-match': etag } })
  t.equal(cheap.statusCode, 304, 'another project changed: the same answer')
  t.same(reads(seen), [], 'and the collection was not read')
  await db.collection('stewards').insertOne({ project, name: 'Chloé' })
  const changed = await a.inject({ url, headers: { 'if-none-match': cheap.headers.etag as string } })
  t.equal(changed.statusCode, 200, 'a new steward: a new answer')
  t.match(changed.json(), { data: [{ name: 'Chloé' }] })
  await db.collection('stewards').updateOne({ project, name: 'Chloé' }, { $set: { email: 'chloe@example.org' } })
  seen.length = 0
  const same = await a.inject({ url, headers: { 'if-none-match': changed.headers.etag as string } })
  t.equal(same.statusCode, 304, 'a change the answer does not show (email, not asked for): the same body, a 304')
  t.same(reads(seen), ['find'], 'decided by reading and comparing')
})

t.test('the stream\'s point is sealed: unreadable, fresh every time, and bound to its tag', feeds, async (t) => {
  // Another project's list: this test's writes leave the others' points alone.
  const other = `/projects/${elsewhere.toHexString()}/stewards?sort=%2Bname&fields=name`
  /** The next ETag that satisfies `wanted` (one with the point: the stream opens at the first revalidation). */
  const etagWhere = async (wanted: (etag: string) => boolean): Promise<string> => {
    let etag = ''
    t.ok(await until(async () => {
      etag = String((await a.inject(other)).headers.etag)
      return etag.split('.').length === 4 && wanted(etag)
    }, 10_000))
    return etag
  }
  const withPoint = async (): Promise<string> => await etagWhere(() => true)
  const first = await withPoint()
  const sealed = first.split('.')[3]?.replace(/"$/, '') as string
  t.notMatch(Buffer.from(sealed, 'base64url').toString('latin1'), /_data|"t"/, 'the collection\'s position does not show')
  const second = await withPoint()
  t.not(second.split('.')[3], first.split('.')[3], 'the same answer, another seal: a write elsewhere does not show')
  // A newer point grafted onto an older body's digests would vouch for a body the client does not hold.
  await db.collection('stewards').insertOne({ project: elsewhere, name: 'Bérénice' })
  const newer = await etagWhere((etag) => etag.split('.')[1] !== first.split('.')[1])
  const grafted = `${first.split('.').slice(0, 3).join('.')}.${newer.split('.')[3] as string}`
  const res = await a.inject({ url: other, headers: { 'if-none-match': grafted } })
  t.equal(res.statusCode, 200, 'a grafted point is not opened: the query decides, and the body differs')
  t.match(res.json(), { data: [{ name: 'Ailleurs' }, { name: 'Bérénice' }] })
})

t.test('another replica, and a restart, understand the ETag', feeds, async (t) => {
  const etag = (await a.inject(url)).headers.etag as string
  t.equal((await b.inject({ url, headers: { 'if-none-match': etag } })).statusCode, 304)
  const seen = watch(b)
  t.ok(await until(async () => {
    seen.length = 0
    return (await b.inject({ url, headers: { 'if-none-match': etag } })).statusCode === 304 && reads(seen).length === 0
  }, 10_000), 'once its stream is open, without reading the collection')
  // The database is the test's: one more app on it must not drop it when it closes.
  const restarted = await build(t, { config, databaseUri: (await testDatabase()).uri })
  t.equal((await restarted.inject({ url, headers: { 'if-none-match': etag } })).statusCode, 304)
})

t.test('access control comes first, and a 304 does not count against the rate limit', async (t) => {
  const limited = await build(t,
    { config: { ...config, RATE_LIMIT_PER_MINUTE: 4 }, databaseUri: (await testDatabase()).uri })
  const first = await limited.inject({ url, remoteAddress: '127.0.0.9' })
  t.equal(first.statusCode, 200, first.body.slice(0, 200))
  const etag = first.headers.etag as string
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) {
    statuses.push((await limited.inject({
      url, remoteAddress: '127.0.0.9', headers: { 'if-none-match': etag }
    })).statusCode)
  }
  t.same(statuses, [304, 304, 304, 304, 304, 304], 'six 304s within a limit of four a minute')
  const plain: number[] = []
  for (let i = 0; i < 4; i++) plain.push((await limited.inject({ url, remoteAddress: '127.0.0.9' })).statusCode)
  t.same(plain, [200, 200, 200, 429], 'the first answer and three more: the fifth counted request is refused')
  const unknown = await a.inject({
    url: url.replace(project.toHexString(), new ObjectId().toHexString()), headers: { 'if-none-match': etag }
  })
  t.equal(unknown.statusCode, 404, 'no 304 for a list that cannot be read')
})

t.test('a body answered again reuses its digest only when its bytes are the same', async (t) => {
  // Above 4 KiB an answer's body is a Buffer, below it text: both kinds are remembered.
  const bulk = new ObjectId()
  await db.collection('projects').insertOne({ _id: bulk, name: 'Bulk' })
  await db.collection('stewards').insertMany(Array.from({ length: 80 }, (_, i) => ({
    project: bulk, name: `Steward ${String(i).padStart(2, '0')}`, email: `steward${i}@example.org`
  })))
  const lists = {
    large: `/projects/${bulk.toHexString()}/stewards?sort=%2Bname&limit=100`,
    small: `/projects/${bulk.toHexString()}/stewards?sort=%2Bname&limit=2`
  }
  // The body's and the request's digests; a stream's point may follow them (the stream is open).
  const bodyTag = (etag: string | number | string[] | undefined): string => String(etag).split('.')[1] as string
  const digests = (etag: string | number | string[] | undefined): string =>
    String(etag).split('.').slice(1, 3).join('.')
  const sha256Of = (body: Buffer): string => createHash('sha256').update(body).digest('base64url').slice(0, 22)
  for (const [size, list] of Object.entries(lists)) {
    const first = await a.inject(list)
    t.equal(first.body.length > 4096, size === 'large', `${size}: ${first.body.length} bytes`)
    t.equal(bodyTag(first.headers.etag), sha256Of(first.rawPayload), `${size}: the body's SHA-256`)
    t.equal(digests((await a.inject(list)).headers.etag), digests(first.headers.etag),
      `${size}: the same body, the same digests`)
    // The same length, other bytes: only a comparison of the bytes tells them apart.
    const renamed = size === 'large' ? 'Steward 79' : 'Steward 00'
    await db.collection('stewards').updateOne({ project: bulk, name: renamed },
      { $set: { name: renamed.replace('Steward', 'Stewart') } })
    const changed = await a.inject(list)
    t.equal(changed.body.length, first.body.length)
    t.not(bodyTag(changed.headers.etag), bodyTag(first.headers.etag), `${size}: other bytes, another digest`)
    t.equal(bodyTag(changed.headers.etag), sha256Of(changed.rawPayload), `${size}: the new body's SHA-256`)
    t.equal(digests((await b.inject(list)).headers.etag), digests(changed.headers.etag),
      `${size}: as another replica computes them`)
    t.equal((await a.inject({ url: list, headers: { 'if-none-match': first.headers.etag as string } })).statusCode, 200,
      `${size}: the old ETag is not this answer's`)
  }
})
