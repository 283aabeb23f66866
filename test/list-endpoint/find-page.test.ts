// find-page.ts: a list page is one `find` command through Db#command with `raw`. Its documents
// must be exactly those the driver's own find gives for the same query, with nothing left open
// on the server; the command carries what the driver's find would (read concern included).
import {
  BSON,
  Long,
  MongoClient,
  MongoNetworkError,
  MongoServerError,
  ObjectId,
  ReadConcern,
  ReadPreference,
  type ClientSession,
  type CommandStartedEvent,
  type Db,
  type Document
} from 'mongodb'
import t from 'tap'
import { decodeAt } from '../../list-endpoint/bson-page.js'
import { findCommand, findPage, findProjectPage, type PageQuery } from '../../list-endpoint/find-page.js'
import { clientOfTestDatabase } from '../helpers/database.js'
import { fakeDb } from '../helpers/fake-db.js'

const { client, db } = await clientOfTestDatabase('find_page', { monitorCommands: true })

interface Thing { _id: number, n: number, name: string, at: Date }
interface Item { _id: number, project: ObjectId, n: number, name: string, secret: string }
/** A query of the tests below, before the projection each adds. */
type Unprojected = Omit<PageQuery, 'projection'>

await db.collection<Thing>('things').insertMany(Array.from({ length: 150 }, (_, i) => ({
  _id: i,
  n: i % 7,
  name: `thing ${i}`,
  at: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000)
})))

t.test('the documents are the driver find\'s, for skips, sorts and limits around the batch sizes, ' +
  'and no cursor stays open', async (t) => {
  const commands: string[] = []
  const listener = (event: CommandStartedEvent): void => { commands.push(event.commandName) }
  client.on('commandStarted', listener)
  t.teardown(() => { client.off('commandStarted', listener) })
  const queries: Unprojected[] = [
    { filter: {}, sort: { _id: 1 }, skip: 0, limit: 21 },
    { filter: { n: 3 }, sort: { name: -1, _id: 1 }, skip: 2, limit: 5 },
    { filter: { n: { $gte: 1 } }, sort: { at: -1, _id: 1 }, skip: 0, limit: 102 },
    { filter: {}, sort: { _id: 1 }, skip: 140, limit: 1001 },
    { filter: { n: 99 }, sort: { _id: 1 }, skip: 0, limit: 2 }
  ]
  const projection = { _id: 1, name: 1, at: 1 }
  for (const query of queries) {
    const expected = await db.collection<Thing>('things').find(query.filter, { ...query, projection }).toArray()
    commands.length = 0
    const page = await findPage(db, 'things', { ...query, projection },
      { maxTimeMS: 5000, signal: new AbortController().signal })
    t.same(commands, ['find'], `${JSON.stringify(query)}: one find, no getMore, no killCursors`)
    t.strictSame(page.starts.map((_, i) => decodeAt(page, i)), expected,
      `${JSON.stringify(query)}: the driver's documents`)
  }
})

t.test('the command: find first, one more in the batch than the limit, ' +
  'and the read concern the driver would send', async (t) => {
  const query: PageQuery = { filter: { n: 1 }, sort: { _id: 1 }, projection: { _id: 1 }, skip: 3, limit: 11 }
  const command = findCommand(db, 'things', query, 700)
  t.equal(Object.keys(command)[0], 'find')
  t.strictSame(command, {
    find: 'things',
    filter: { n: 1 },
    sort: { _id: 1 },
    projection: { _id: 1 },
    skip: 3,
    limit: 11,
    batchSize: 12,
    maxTimeMS: 700
  })
  const majority = new MongoClient('mongodb://127.0.0.1:1/?readConcernLevel=majority').db('x')
  t.strictSame(findCommand(majority, 'things', query, 700).readConcern, new ReadConcern('majority'))
  t.equal(command.readConcern, undefined, 'and none when the client has none')
})

const cursorReply = (docs: Document[], id: number): Document => ({
  cursor: Buffer.from(BSON.serialize({ firstBatch: docs, id: Long.fromNumber(id), ns: 'x.things' })),
  ok: 1
})
const options = { maxTimeMS: 1000, signal: new AbortController().signal }
const query: PageQuery = { filter: {}, sort: { _id: 1 }, projection: { _id: 1 }, skip: 0, limit: 2 }

t.test('a cursor left open after the whole limit was returned is killed, and the page kept', async (t) => {
  const { db, sent } = fakeDb((command) => command.find !== undefined
    ? cursorReply([{ _id: 1 }, { _id: 2 }], 77)
    : { ok: 1 })
  const page = await findPage(db, 'things', query, options)
  t.strictSame(page.starts.map((_, i) => decodeAt(page, i)), [{ _id: 1 }, { _id: 2 }])
  t.strictSame(sent.map((c) => Object.keys(c)[0]), ['find', 'killCursors'])
  t.strictSame(sent[1], { killCursors: 'things', cursors: [Long.fromNumber(77)] })
})

t.test('a failover error is retried once; a second one, or any error with retryReads=false, ' +
  'reaches the caller', async (t) => {
  const stepDown = new MongoServerError({ ok: 0, code: 189, codeName: 'PrimarySteppedDown', errmsg: 'stepped down' })
  const once = fakeDb((_, call) => { if (call === 1) throw stepDown; return cursorReply([{ _id: 1 }], 0) })
  t.equal((await findPage(once.db, 'things', query, options)).starts.length, 1)
  t.equal(once.sent.length, 2, 'sent twice')
  const network = fakeDb((_, call) => {
    if (call === 1) throw new MongoNetworkError('reset')
    return cursorReply([], 0)
  })
  t.equal((await findPage(network.db, 'things', query, options)).starts.length, 0, 'a network error too')
  const twice = fakeDb(() => { throw stepDown })
  await t.rejects(findPage(twice.db, 'things', query, options), stepDown)
  t.equal(twice.sent.length, 2, 'no third try')
  const off = fakeDb(() => { throw stepDown }, { retryReads: false })
  await t.rejects(findPage(off.db, 'things', query, options), stepDown)
  t.equal(off.sent.length, 1, 'retryReads=false: not retried')
  const limited = fakeDb(() => {
    throw new MongoServerError({ ok: 0, code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'time' })
  })
  await t.rejects(findPage(limited.db, 'things', query, options))
  t.equal(limited.sent.length, 1, 'a time limit is not retried')
})

t.test('a project not remembered: its page and its existence in one aggregate, ' +
  'the same documents as find', async (t) => {
  const projectId = new ObjectId()
  await db.collection('projects').insertOne({ _id: projectId, name: 'p' })
  await db.collection<Item>('items').insertMany(Array.from({ length: 40 }, (_, i) => ({
    _id: i, project: projectId, n: i % 5, name: `item ${i}`, secret: 'x'
  })))
  const commands: string[] = []
  const listener = (event: CommandStartedEvent): void => { commands.push(event.commandName) }
  client.on('commandStarted', listener)
  t.teardown(() => { client.off('commandStarted', listener) })
  const projection = { _id: 1, name: 1, n: 1 }
  const queries: Unprojected[] = [
    { filter: { project: projectId }, sort: { _id: 1 }, skip: 0, limit: 11 },
    { filter: { project: projectId, n: { $gte: 2 } }, sort: { name: -1, _id: 1 }, skip: 3, limit: 6 },
    { filter: { project: projectId }, sort: { n: 1, _id: -1 }, skip: 35, limit: 101 }
  ]
  for (const query of queries) {
    const expected = await db.collection<Item>('items').find(query.filter, { ...query, projection }).toArray()
    commands.length = 0
    const { exists, page } = await findProjectPage(db, 'items', projectId, { ...query, projection }, options)
    t.same(commands, ['aggregate'], `${JSON.stringify(query.sort)}: one command`)
    t.equal(exists, true)
    t.strictSame(page.starts.map((_, i) => decodeAt(page, i)), expected,
      `${JSON.stringify(query.sort)} skip ${query.skip}: the find's documents, in its order, only the projected fields`)
  }
  const empty = await findProjectPage(db, 'items', projectId,
    { filter: { project: projectId, n: 99 }, sort: { _id: 1 }, projection, skip: 0, limit: 5 }, options)
  t.same([empty.exists, empty.page.starts.length], [true, 0], 'an empty page of a project that exists')
  const missing = await findProjectPage(db, 'items', new ObjectId(),
    { filter: {}, sort: { _id: 1 }, projection, skip: 0, limit: 5 }, options)
  t.same([missing.exists, missing.page.starts.length], [false, 0], 'no project: nothing, whatever the filter matches')
  const noCollection = await findProjectPage(db, 'nothing_here', projectId,
    { filter: {}, sort: { _id: 1 }, projection, skip: 0, limit: 5 }, options)
  t.same([noCollection.exists, noCollection.page.starts.length], [true, 0], 'a collection that does not exist yet')
})

/**
 * A Db whose `command` replies with the cursor decoded although `raw` was asked for, and whose
 * collections' cursors give `docs` as raw BSON, recording what each read was sent.
 */
function decodingDb (
  docs: Document[],
  cursorId = 0
): { db: Db, sent: Document[], reads: Array<{ kind: string, collection: string, options: Document }> } {
  const reads: Array<{ kind: string, collection: string, options: Document }> = []
  const raw = { toArray: async () => docs.map((doc) => BSON.serialize(doc)) }
  const { db, sent } = fakeDb(() => ({
    cursor: { firstBatch: docs, id: Long.fromNumber(cursorId), ns: 'x.things' }, ok: 1
  }), {
    collection: (collection) => ({
      find: (_: Document, options: Document) => { reads.push({ kind: 'find', collection, options }); return raw },
      aggregate: (_: Document[], options: Document) => {
        reads.push({ kind: 'aggregate', collection, options })
        return raw
      }
    })
  })
  return { db, sent, reads }
}

const documentsOf = (page: { starts: number[] }): Document[] =>
  page.starts.map((_, i) => decodeAt(page as Parameters<typeof decodeAt>[0], i))

t.test('a driver that decodes the raw reply: the page comes through its find cursor, with the same options, ' +
  'and the same documents', async (t) => {
  const docs = [{ _id: 1, name: 'a', at: new Date(0) }, { _id: 2, name: 'b', at: new Date(1) }]
  const expected = documentsOf(await findPage(fakeDb(() => cursorReply(docs, 0)).db, 'things', query, options))
  const { db, sent, reads } = decodingDb(docs, 41)
  const session = { id: 'a session' } as unknown as ClientSession
  const feedOptions = {
    ...options, session, readConcern: { level: 'majority' as const }, readPreference: ReadPreference.secondaryPreferred
  }
  const page = await findPage(db, 'things', query, feedOptions)
  t.strictSame(documentsOf(page), expected, 'the page the raw reply would have given')
  t.strictSame(sent.map((c) => Object.keys(c)[0]), ['find', 'killCursors'],
    'the decoded reply\'s open cursor is killed')
  t.equal(reads.length, 1)
  t.match(reads[0], {
    kind: 'find',
    collection: 'things',
    options: { raw: true, sort: query.sort, projection: query.projection, skip: 0, limit: 2, maxTimeMS: 1000 }
  })
  t.equal(reads[0]?.options.session, session, 'the page\'s session')
  t.strictSame(reads[0]?.options.readConcern, { level: 'majority' }, 'its read concern')
  t.equal(reads[0]?.options.readPreference, ReadPreference.secondaryPreferred, 'its read preference')
  await findPage(db, 'things', query, feedOptions)
  t.equal(sent.length, 2, 'the next page goes straight to the cursor: no command wasted')
  t.equal(reads.length, 2)
})

t.test('a driver that decodes the raw reply: a project\'s page comes through its aggregate cursor, ' +
  'the same as the raw reply\'s', async (t) => {
  const projectId = new ObjectId()
  const docs = [{ _id: projectId, page: { _id: 1, name: 'a' } }, { _id: projectId, page: { _id: 2, name: 'b' } }]
  const expected = await findProjectPage(fakeDb(() => cursorReply(docs, 0)).db, 'items', projectId, query, options)
  const { db, sent, reads } = decodingDb(docs)
  const { exists, page } = await findProjectPage(db, 'items', projectId, query, options)
  t.equal(exists, true)
  t.strictSame(documentsOf(page), documentsOf(expected.page))
  t.strictSame(documentsOf(page), [{ _id: 1, name: 'a' }, { _id: 2, name: 'b' }])
  t.strictSame(sent.map((c) => Object.keys(c)[0]), ['aggregate'], 'a closed cursor is not killed')
  t.match(reads, [{ kind: 'aggregate', collection: 'projects', options: { raw: true, batchSize: 3, maxTimeMS: 1000 } }])
  const missing = await findProjectPage(decodingDb([]).db, 'items', new ObjectId(), query, options)
  t.same([missing.exists, missing.page.starts.length], [false, 0], 'no project: nothing')
})

t.test('a reply with no cursor document, or a cursor of another type, is damaged: MalformedBson, ' +
  'and the next page still comes raw', async (t) => {
  for (const [what, cursor] of [
    ['none', undefined], ['a string', 'x'], ['a document without firstBatch', { id: Long.fromNumber(0) }]
  ] as const) {
    let damaged = true
    const { db, sent } = fakeDb(() => damaged
      ? { ok: 1, ...(cursor === undefined ? {} : { cursor }) }
      : cursorReply([{ _id: 1 }], 0))
    await t.rejects(findPage(db, 'things', query, options), { name: 'MalformedBson' }, `${what}: the page`)
    await t.rejects(findProjectPage(db, 'items', new ObjectId(), query, options), { name: 'MalformedBson' },
      `${what}: a project's page`)
    damaged = false
    sent.length = 0
    const page = await findPage(db, 'things', query, options)
    t.strictSame(page.starts.map((_, i) => decodeAt(page, i)), [{ _id: 1 }], `${what}: the next page`)
    t.strictSame(sent.map((c) => Object.keys(c)[0]), ['find'], `${what}: read raw, as before, in one command`)
  }
})
