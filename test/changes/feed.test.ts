// The change feed's promise (docs/changes.md): a copy kept by following a feed equals the list,
// whatever was written; deletions and documents leaving the filter or the project are removes;
// no event names another project's document; tokens are bound like cursors.
import { ObjectId, type Db, type Document, type Timestamp } from 'mongodb'
import t, { type Test } from 'tap'
import { clusterTimeOf, fromTimestamp, tokenLayoutBroken } from '../../changes/cluster-time.js'
import { build } from '../helpers/build.js'
import { FeedCopy, listAll, prepareFeeds, requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'

const feeds = await requireChangeStreams(t)

const SECRET = 'a-feed-test-secret-of-32-bytes-at-least'

async function setUp (t: Test) {
  const fastify = await build(t, { config: { CURSOR_SECRET: SECRET } })
  const db = fastify.mongo.db as Db
  await prepareFeeds(db)
  const project = new ObjectId()
  const other = new ObjectId()
  await db.collection('projects').insertMany([{ _id: project, name: 'P' }, { _id: other, name: 'Q' }])
  const get = async (url: string) => await fastify.inject(url)
  return { fastify, db, project, other, get }
}

t.test('listing, then changes: the copy equals the list, and removes are exact', feeds, async (t) => {
  const { db, project, other, get } = await setUp(t)
  const registrations = db.collection('registrations')
  await registrations.insertMany(Array.from({ length: 7 }, (_, i) => ({
    project, role: i % 2 === 0 ? 'volunteer' : 'guest', createdAt: new Date(Date.UTC(2024, 0, i + 1))
  })))
  await registrations.insertMany([{ project: other, role: 'volunteer' }])
  const path = `/projects/${String(project)}/registrations/changes`
  const query = `filter=${encodeURIComponent('{"role":"volunteer"}')}`
  const copy = new FeedCopy(path, query)

  const first = await get(copy.url('limit=2'))
  t.equal(first.statusCode, 200)
  const answer = JSON.parse(first.body) as FeedAnswer
  t.equal(answer.events.length, 2, 'the listing comes limit by limit')
  t.equal(answer.synced, false, 'not synced while the listing goes on')
  t.match(String(first.headers.link),
    /^<http:\/\/[^>]+\/registrations\/changes\?filter=[^&]+&limit=2&since=[^>]+>; rel="next"$/)
  copy.apply(answer)
  await copy.catchUp(get, 2)
  t.ok(copy.synced)
  t.same(copy.sorted(), await listAll(get, `/projects/${String(project)}/registrations`, query),
    'after the listing, the copy is the list')

  const ids = (await registrations.find({ project, role: 'volunteer' }).sort({ _id: 1 }).toArray())
    .map((doc) => doc._id)
  const inserted = (await registrations.insertOne({ project, role: 'volunteer', createdAt: new Date() })).insertedId
  await registrations.updateOne({ _id: ids[0] }, { $set: { role: 'guest' } }) // leaves the filter
  await registrations.deleteOne({ _id: ids[1] }) // deleted
  await registrations.updateOne({ _id: ids[2] }, { $set: { project: other } }) // moved to another project
  await registrations.updateOne({ project: other, role: 'volunteer', _id: { $ne: ids[2] } },
    { $set: { createdAt: new Date() } }) // another project's
  await registrations.insertOne({ project: other, role: 'volunteer' }) // another project's
  await registrations.updateOne({ project, role: 'guest', _id: { $ne: ids[0] } },
    { $set: { role: 'volunteer' } }) // enters the filter
  await copy.catchUp(get, 2)
  t.same(copy.sorted(), await listAll(get, `/projects/${String(project)}/registrations`, query),
    'after the changes, the copy is the list')
  t.notOk(copy.documents.has(ids[0]?.toHexString() as string), 'a document that left the filter is removed')
  t.notOk(copy.documents.has(ids[1]?.toHexString() as string), 'a deleted document is removed')
  t.notOk(copy.documents.has(ids[2]?.toHexString() as string), 'a document moved to another project is removed')
  t.ok(copy.documents.has(inserted.toHexString()), 'an inserted match is there')
  const others = new Set((await registrations.find({ project: other }).toArray()).map((doc) => doc._id.toHexString()))
  const foreign = [...copy.seen].filter((id) => others.has(id) && id !== ids[2]?.toHexString())
  t.same(foreign, [], 'no event named a document of another project (but the one that left)')
})

t.test('documents that leave the filter while the listing is read: ' +
  'the answer that ends it is not "nothing left"', feeds, async (t) => {
  const { db, project, get } = await setUp(t)
  const registrations = db.collection('registrations')
  const { insertedIds } = await registrations.insertMany([0, 1].map((i) => ({
    project, role: 'volunteer', createdAt: new Date(Date.UTC(2024, 0, i + 1))
  })))
  const path = `/projects/${String(project)}/registrations/changes`
  const query = `filter=${encodeURIComponent('{"role":"volunteer"}')}`
  const copy = new FeedCopy(path, query)
  const first = JSON.parse((await get(copy.url('limit=1'))).body) as FeedAnswer
  t.same(first.events.map((event) => event._id), [String(insertedIds[0])], 'the first of two matches')
  copy.apply(first)
  // Both leave the filter before the listing reaches its end: the page after the first finds nothing.
  await registrations.updateMany({ project }, { $set: { role: 'guest' } })
  const last = JSON.parse((await get(copy.url('limit=1'))).body) as FeedAnswer
  t.equal(last.synced, true, 'the listing is complete')
  // One of the two changes (limit 1): whichever the update made first (MongoDB does not promise
  // updateMany's order).
  t.match(last.events, [{ type: 'remove', _id: /^/, reason: 'unmatched' }],
    'and the answer that ends it carries a change made meanwhile')
  t.ok([String(insertedIds[0]), String(insertedIds[1])].includes(String(last.events[0]?._id)), 'of one of the two')
  copy.apply(last)
  await copy.catchUp(get, 1)
  t.same(copy.sorted(), [], 'the copy is the list: empty')
  t.same(await listAll(get, `/projects/${String(project)}/registrations`, query), [])
})

t.test('a feed with $or and $and follows the list of the same filter, in both notations', feeds, async (t) => {
  const { db, project, other, get } = await setUp(t)
  const registrations = db.collection('registrations')
  await registrations.insertMany(Array.from({ length: 9 }, (_, i) => ({
    project, role: ['volunteer', 'guest', 'staff'][i % 3], name: `R${i}`, createdAt: new Date(Date.UTC(2024, i, 1))
  })))
  await registrations.insertMany([{ project: other, role: 'volunteer', name: 'R0' }])
  const path = `/projects/${String(project)}/registrations/changes`
  const list = `/projects/${String(project)}/registrations`
  const filter = {
    $or: [{ role: 'volunteer' }, { $and: [{ role: 'staff' }, { createdAt: { $gte: '2024-05-01' } }] }, { name: 'R1' }]
  }
  const json = `filter=${encodeURIComponent(JSON.stringify(filter))}`
  const brackets = 'filter[$or][0][role]=volunteer&filter[$or][1][$and][0][role]=staff' +
    '&filter[$or][1][$and][1][createdAt][$gte]=2024-05-01&filter[$or][2][name]=R1'
  for (const query of [json, brackets]) {
    const copy = new FeedCopy(path, query)
    await copy.catchUp(get, 2)
    const expected = await listAll(get, list, query)
    t.ok(expected.length >= 4, `${expected.length} matches`)
    t.same(copy.sorted(), expected, 'after the listing, the copy is the list')
    const [first] = await registrations.find({ project, role: 'volunteer' }).sort({ _id: 1 }).limit(1).toArray()
    await registrations.updateOne({ _id: first?._id }, { $set: { role: 'guest' } }) // leaves every branch
    await registrations.updateOne({ project, name: 'R4' }, { $set: { name: 'R1' } }) // enters through the third branch
    await registrations.insertOne({
      project, role: 'staff', createdAt: new Date('2024-12-24T00:00:00Z')
    }) // enters through the nested $and
    await copy.catchUp(get, 2)
    t.same(copy.sorted(), await listAll(get, list, query), 'after the changes, the copy is the list')
    t.notOk(copy.documents.has(String(first?._id)), 'a document that left every branch is removed')
  }
})

t.test('an answer without events moves its token on, and says synced', feeds, async (t) => {
  const { db, project, get } = await setUp(t)
  const path = `/projects/${String(project)}/sessions/changes`
  const copy = new FeedCopy(path)
  await copy.catchUp(get)
  const before = copy.next
  await db.collection('sessions').insertOne({ project: new ObjectId(), name: 'elsewhere' })
  const res = await get(copy.url())
  const answer = JSON.parse(res.body) as FeedAnswer
  t.same(answer.events, [], 'another project\'s change is no event')
  t.equal(answer.synced, true)
  t.not(answer.next, before, 'the token moved past what was looked at')
})

t.test('tokens are bound to the path, the filter and the fields, and signed', feeds, async (t) => {
  const { db, project, other, get } = await setUp(t)
  const path = `/projects/${String(project)}/registrations/changes`
  const res = await get(`${path}?fields=role`)
  const { next } = JSON.parse(res.body) as FeedAnswer
  const problem = async (url: string) =>
    JSON.parse((await get(url)).body) as { status: number, code: string, errors: Array<{ param: string }> }
  t.match(await problem(`${path}?fields=role&since=${next}x`),
    { status: 400, code: 'INVALID_CURSOR', errors: [{ param: 'since' }] })
  const flipped = `${next.slice(0, 10)}${next[10] === 'A' ? 'B' : 'A'}${next.slice(11)}`
  t.match(await problem(`${path}?fields=role&since=${flipped}`), { status: 400, code: 'INVALID_CURSOR' })
  t.match(await problem(`${path}?since=${next}`), { status: 400, code: 'CURSOR_MISMATCH' }, 'other fields')
  t.match(await problem(`${path}?fields=role&filter=${encodeURIComponent('{"role":"x"}')}&since=${next}`),
    { status: 400, code: 'CURSOR_MISMATCH' }, 'another filter')
  const filtered = (filter: string): string => `${path}?fields=role&filter=${encodeURIComponent(filter)}`
  const token = (JSON.parse((await get(filtered('{"role":{"$in":["a","b"]},"name":{"$exists":true}}'))).body) as
    FeedAnswer).next
  t.equal((await get(`${filtered('{"name":{"$exists":true},"role":{"$in":["b","a"]}}')}&since=${token}`)).statusCode,
    200, 'the same filter written otherwise')
  t.match(await problem(`/projects/${String(other)}/registrations/changes?fields=role&since=${next}`),
    { status: 400, code: 'CURSOR_MISMATCH' }, 'another project')
  t.match(await problem(`/projects/${String(project)}/sessions/changes?fields=name&since=${next}`), { status: 400 },
    'another kind')
  // Two registrations and a limit of one: the list's page has a next cursor to offer as a token.
  await db.collection('registrations').insertMany([{ project, role: 'guest' }, { project, role: 'staff' }])
  const list = JSON.parse((await get(`/projects/${String(project)}/registrations?limit=1&fields=role`)).body) as {
    next?: string
  }
  t.type(list.next, 'string', 'the list has a next page')
  t.match(await problem(`${path}?fields=role&since=${String(list.next)}`),
    { status: 400, code: 'INVALID_CURSOR', detail: /list's cursor[\s\S]*start again without since/ },
    'a list cursor is no token')
})

t.test('the feed takes the list\'s filter rules and its own parameters only', feeds, async (t) => {
  const { project, get } = await setUp(t)
  const path = `/projects/${String(project)}/registrations/changes`
  const problem = async (url: string) => JSON.parse((await get(url)).body) as {
    status: number, code: string, errors: Array<{ param: string, code: string, pointer: string }>
  }
  t.match(await problem(`${path}?filter=${encodeURIComponent('{"nmae":"x"}')}`),
    { status: 400, code: 'UNKNOWN_FIELD', errors: [{ param: 'filter', pointer: '/nmae' }] })
  for (const param of ['sort=name', 'skip=1', 'count=true', 'after=x', 'page=2']) {
    t.match(await problem(`${path}?${param}`), { status: 400, code: 'UNKNOWN_PARAMETER' }, param)
  }
  t.match(await problem(`${path}?limit=0`), { status: 400, code: 'INVALID_LIMIT' })
  t.match(await problem(`${path}?limit=1001`), { status: 400, code: 'INVALID_LIMIT' })
  t.match(await problem(`${path}?wait=61`), { status: 400, code: 'INVALID_VALUE', errors: [{ param: 'wait' }] })
  t.match(await problem(`${path}?fields=nope`), { status: 400, code: 'INVALID_FIELDS' })
  t.match(await problem(`/projects/${String(new ObjectId())}/registrations/changes`),
    { status: 404, code: 'PROJECT_NOT_FOUND' })
  t.match(await problem('/projects/nope/registrations/changes'), { status: 400, code: 'INVALID_PROJECT_ID' })
  t.equal((await get('/projects/public/changes')).statusCode, 404, '/projects/public has no feed')
  const post = await (await setUp(t)).fastify.inject({ method: 'POST', url: path })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD')
})

t.test('a collection without pre- and post-images: 503 CHANGES_UNAVAILABLE naming it; ' +
  'lists and /ready unaffected', feeds, async (t) => {
  // The database is prepared before the service starts, as an operator would have left it.
  const { uniqueDatabaseName, testDatabase } = await import('../helpers/database.js')
  const { MongoClient } = await import('mongodb')
  const name = uniqueDatabaseName('images')
  const client = await new MongoClient((await testDatabase()).uri).connect()
  t.teardown(async () => { await client.db(name).dropDatabase(); await client.close() })
  const db = client.db(name)
  await prepareFeeds(db)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'P' })
  await db.collection('teams').insertOne({ project, name: 'T' })
  await db.command({ collMod: 'teams', changeStreamPreAndPostImages: { enabled: false } })
  const fastify = await build(t, { config: { CURSOR_SECRET: SECRET, MONGODB_DB: name } })
  const get = async (url: string) => await fastify.inject(url)
  const res = await get(`/projects/${String(project)}/teams/changes`)
  t.equal(res.statusCode, 503)
  const body = JSON.parse(res.body) as { code: string, detail: string }
  t.equal(body.code, 'CHANGES_UNAVAILABLE')
  t.match(body.detail, /teams.*pre- and post-images.*collMod/)
  t.ok(Number(res.headers['retry-after']) > 0)
  t.equal((await get(`/projects/${String(project)}/teams`)).statusCode, 200, 'the list answers')
  t.equal((await get(`/projects/${String(project)}/sessions/changes`)).statusCode, 200,
    'the feeds of other collections answer')
  t.equal((await get('/ready')).statusCode, 200, '/ready answers 200')
  await db.command({ collMod: 'teams', changeStreamPreAndPostImages: { enabled: true } })
  t.equal((await get(`/projects/${String(project)}/teams/changes`)).statusCode, 200,
    'once enabled, the feed answers at once')
})

t.test('HEAD on a feed answers its headers without a body', feeds, async (t) => {
  const { fastify, project } = await setUp(t)
  const res = await fastify.inject({ method: 'HEAD', url: `/projects/${String(project)}/places/changes` })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '')
  t.match(String(res.headers.link), /rel="next"/)
})

t.test('HEAD of a stream answers the headers a stream begins with, and holds nothing open', feeds, async (t) => {
  const { fastify, project } = await setUp(t)
  const url = `/projects/${String(project)}/places/changes`
  const accept = { accept: 'application/x-ndjson' }
  // Answered at all: a stream would stay open for CHANGES_STREAM_SECONDS.
  const res = await fastify.inject({ method: 'HEAD', url, headers: accept })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '')
  t.match(res.headers,
    { 'content-type': /^application\/x-ndjson/, 'cache-control': 'no-store', 'x-accel-buffering': 'no' })
  t.notOk('content-length' in res.headers, 'no length: a stream has none')
  t.equal(res.headers['transfer-encoding'], 'chunked', 'the framing of a stream, as GET says it')
  const refused = await fastify.inject({ method: 'HEAD', url: `${url}?since=nonsense`, headers: accept })
  t.equal(refused.statusCode, 400, 'a bad token is still a problem')
  t.match(refused.headers['content-type'], /^application\/problem\+json/)
})

t.test('the database\'s resume tokens hold their event\'s cluster time where the feeds read it', feeds,
  async (t) => {
    // On a real MongoDB this holds the layout that changes/cluster-time.ts assumes.
    const { db } = await setUp(t)
    const registrations = db.collection('registrations')
    const stream = registrations.watch([], { maxAwaitTimeMS: 200 })
    t.teardown(async () => { await stream.close() })
    await stream.tryNext()
    await registrations.insertOne({ project: new ObjectId(), role: 'guest' })
    await registrations.updateMany({}, { $set: { role: 'staff' } })
    let seen = 0
    // Each empty read waits maxAwaitTimeMS: 50 of them bound the wait for two events.
    for (let reads = 0; seen < 2 && reads < 50; reads++) {
      const event = await stream.tryNext()
      if (event === null) continue
      seen++
      t.equal(clusterTimeOf(event._id as Document), fromTimestamp(event.clusterTime as Timestamp),
        `${event.operationType}: the token's time is the event's clusterTime`)
      t.equal(tokenLayoutBroken(event._id as Document, event.clusterTime), false)
    }
    t.equal(seen, 2, 'both events were read')
  })
