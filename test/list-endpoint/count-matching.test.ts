// count-matching.ts: a list's `total` and a counts page's are one `aggregate` through Db#command.
// The number must be the driver's countDocuments' for the same filter and collation, sent as
// countDocuments sends it; a first batch left empty with its cursor open is counted again.
import {
  Long,
  MongoNetworkError,
  MongoServerError,
  ReadConcern,
  type CommandStartedEvent,
  type Db,
  type Document
} from 'mongodb'
import t from 'tap'
import { countCommand, countMatching } from '../../list-endpoint/count-matching.js'
import { clientOfTestDatabase } from '../helpers/database.js'
import { fakeDb } from '../helpers/fake-db.js'

const { client, db } = await clientOfTestDatabase('count_matching', { monitorCommands: true })
interface Word { _id: number, n: number, word: string, tags: string[] }
await db.collection<Word>('words').insertMany(Array.from({ length: 230 }, (_, i) => ({
  _id: i,
  n: i % 7,
  word: ['apple', 'Apple', 'APPLE', 'pear'][i % 4] as string,
  tags: i % 3 === 0 ? ['a', 'b'] : []
})))

const options = { maxTimeMS: 5000, signal: new AbortController().signal }
const EN = { locale: 'en', strength: 2 }

/** What a command carries but the session, cluster time and database the driver adds to any. */
const sentFields = (command: Document): Document => Object.fromEntries(Object.entries(command)
  .filter(([key]) => !['lsid', '$clusterTime', '$db', '$readPreference', 'txnNumber'].includes(key)))

t.test('the count is countDocuments\', for filters that match none, some or all, with and without a collation; ' +
  'one command', async (t) => {
  const started: CommandStartedEvent[] = []
  const listener = (event: CommandStartedEvent): void => { started.push(event) }
  client.on('commandStarted', listener)
  t.teardown(() => { client.off('commandStarted', listener) })
  const cases: Array<{ where: Document, collation?: typeof EN }> = [
    { where: {} },
    { where: { n: 3 } },
    { where: { n: { $gte: 2 }, tags: 'a' } },
    { where: { n: 99 } },
    { where: { word: 'apple' } },
    { where: { word: 'apple' }, collation: EN }
  ]
  for (const { where, collation } of cases) {
    const inCollation = collation === undefined ? {} : { collation }
    started.length = 0
    const expected = await db.collection('words').countDocuments(where, { maxTimeMS: 5000, ...inCollation })
    const theirs = started.map((event) => sentFields(event.command))
    started.length = 0
    const counted = await countMatching(db, 'words', where, { ...options, ...inCollation })
    t.equal(counted, expected,
      `${JSON.stringify(where)}${collation === undefined ? '' : ' in en, strength 2'}: countDocuments' number`)
    t.strictSame(started.map((event) => sentFields(event.command)), theirs,
      'the very command countDocuments sends, and nothing more')
  }
  t.equal(await countMatching(db, 'no_such_collection', {}, options), 0,
    'a collection that does not exist yet counts 0')
})

t.test('the command carries the database\'s read concern, as the driver\'s aggregate does', async (t) => {
  const majority = client.db(db.databaseName, { readConcern: new ReadConcern('majority') })
  const started: Document[] = []
  const listener = (event: CommandStartedEvent): void => { started.push(sentFields(event.command)) }
  client.on('commandStarted', listener)
  t.teardown(() => { client.off('commandStarted', listener) })
  const expected = await majority.collection('words').countDocuments({ n: 1 }, { maxTimeMS: 700 })
  t.equal(await countMatching(majority, 'words', { n: 1 }, { maxTimeMS: 700, signal: options.signal }), expected)
  t.equal(started.length, 2)
  t.same(started[0]?.readConcern, { level: 'majority' }, 'the driver sends it')
  t.strictSame(started[1], started[0], 'and so does the count')
  t.equal(countCommand(db, 'words', { n: 1 }, { maxTimeMS: 700 }).readConcern, undefined,
    'none when the database has none')
})

/** A fake Db (test/helpers/fake-db.ts) whose countDocuments counts `fallback`, recording what it was asked. */
function countingDb (
  answer: (command: Document, call: number) => Document,
  fallback = 0
): { db: Db, sent: Document[], fallbacks: Document[] } {
  const fallbacks: Document[] = []
  const countDocuments = async (where: Document, countOptions: Document): Promise<number> => {
    fallbacks.push({ where, ...countOptions })
    return fallback
  }
  return { ...fakeDb(answer, { collection: () => ({ countDocuments }) }), fallbacks }
}

const reply = (firstBatch: Document[], id: number | Long): Document =>
  ({ cursor: { firstBatch, id, ns: 'x.words' }, ok: 1 })

t.test('a first batch left empty with its cursor open: the cursor is killed and countDocuments counts', async (t) => {
  const open = countingDb((command) => command.aggregate !== undefined ? reply([], Long.fromNumber(41)) : { ok: 1 }, 17)
  t.equal(await countMatching(open.db, 'words', { n: 2 }, { ...options, collation: EN }), 17)
  t.strictSame(open.sent.map((command) => Object.keys(command)[0]), ['aggregate', 'killCursors'])
  t.strictSame(open.sent[1], { killCursors: 'words', cursors: [Long.fromNumber(41)] })
  t.equal(open.fallbacks.length, 1)
  t.strictSame(open.fallbacks[0]?.where, { n: 2 })
  t.strictSame(open.fallbacks[0]?.collation, EN, 'with the collation')
  t.equal(open.fallbacks[0]?.signal, options.signal, 'and the request\'s deadline')

  const none = countingDb(() => reply([], 0), 17)
  t.equal(await countMatching(none.db, 'words', { n: 2 }, options), 0,
    'an empty batch of a closed cursor: nothing matched')
  t.same([none.sent.length, none.fallbacks.length], [1, 0], 'nothing more sent')

  const leftOpen = countingDb((command) => command.aggregate !== undefined ? reply([{ _id: 1, n: 9 }], 5) : { ok: 1 })
  t.equal(await countMatching(leftOpen.db, 'words', {}, options), 9,
    'a group returned with the cursor still open is the count')
  t.strictSame(leftOpen.sent.map((command) => Object.keys(command)[0]), ['aggregate', 'killCursors'],
    'and the cursor is killed')

  const long = countingDb(() => reply([{ _id: 1, n: Long.fromNumber(3_000_000_000) }], 0))
  t.equal(await countMatching(long.db, 'words', {}, options), 3_000_000_000, 'a count past int32 (a Long) is a number')
})

t.test('a failover error is retried once, as the driver retries an aggregate; a time limit is not', async (t) => {
  const stepDown = new MongoServerError({ ok: 0, code: 189, codeName: 'PrimarySteppedDown', errmsg: 'stepped down' })
  const once = countingDb((_, call) => { if (call === 1) throw stepDown; return reply([{ _id: 1, n: 4 }], 0) })
  t.equal(await countMatching(once.db, 'words', {}, options), 4)
  t.equal(once.sent.length, 2, 'sent twice')
  const network = countingDb((_, call) => { if (call === 1) throw new MongoNetworkError('reset'); return reply([], 0) })
  t.equal(await countMatching(network.db, 'words', {}, options), 0, 'a network error too')
  const twice = countingDb(() => { throw stepDown })
  await t.rejects(countMatching(twice.db, 'words', {}, options), stepDown)
  t.equal(twice.sent.length, 2, 'no third try')
  const limited = countingDb(() => {
    throw new MongoServerError({ ok: 0, code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'time' })
  })
  await t.rejects(countMatching(limited.db, 'words', {}, options))
  t.equal(limited.sent.length, 1, 'a time limit is not retried')
})

t.test('a reply with no cursor document, or a group without its number, is damaged: ' +
  'MalformedBson, never a count of 0', async (t) => {
  const damaged: Array<[string, Document]> = [
    ['no cursor', { ok: 1 }],
    ['a cursor without firstBatch', { cursor: { id: 0, ns: 'x.words' }, ok: 1 }],
    ['a group without n', reply([{ _id: 1 }], 0)],
    ['a group whose n is a string', reply([{ _id: 1, n: '4' }], 0)]
  ]
  for (const [what, answer] of damaged) {
    const { db, fallbacks } = countingDb(() => answer)
    await t.rejects(countMatching(db, 'words', {}, options), { name: 'MalformedBson' }, what)
    t.equal(fallbacks.length, 0, `${what}: not counted again`)
  }
})
