// find-page.ts: a list page is one `find` command through Db#command with `raw`. Its documents
// must be exactly those the driver's own find gives for the same query, with nothing left open
// on the server; the command carries what the driver's find would (read concern included).
import { MongoClient, ReadConcern, type CommandStartedEvent } from 'mongodb'
import t from 'tap'
import { decodeAt } from '../../list-endpoint/bson-json.js'
import { findCommand, findPage } from '../../list-endpoint/find-page.js'
import { testDatabase, uniqueDatabaseName } from '../helpers/database.js'

const database = await testDatabase()
const client = new MongoClient(database.uri, { serverSelectionTimeoutMS: 5000, monitorCommands: true })
await client.connect()
const db = client.db(uniqueDatabaseName('find_page'))
t.teardown(async () => {
  await db.dropDatabase()
  await client.close()
})

await db.collection('things').insertMany(Array.from({ length: 150 }, (_, i) => ({ _id: i, n: i % 7, name: `thing ${i}`, at: new Date(Date.UTC(2024, 0, 1) + i * 3_600_000) })))

t.test('the documents are the driver find\'s, for skips, sorts and limits around the batch sizes, and no cursor stays open', async (t) => {
  const commands: string[] = []
  const listener = (event: CommandStartedEvent): void => { commands.push(event.commandName) }
  client.on('commandStarted', listener)
  t.teardown(() => { client.off('commandStarted', listener) })
  const queries = [
    { filter: {}, sort: { _id: 1 }, skip: 0, limit: 21 },
    { filter: { n: 3 }, sort: { name: -1, _id: 1 }, skip: 2, limit: 5 },
    { filter: { n: { $gte: 1 } }, sort: { at: -1, _id: 1 }, skip: 0, limit: 102 },
    { filter: {}, sort: { _id: 1 }, skip: 140, limit: 1001 },
    { filter: { n: 99 }, sort: { _id: 1 }, skip: 0, limit: 2 }
  ]
  const projection = { _id: 1, name: 1, at: 1 }
  for (const query of queries) {
    const expected = await db.collection('things').find(query.filter, { ...query, projection }).toArray()
    commands.length = 0
    const page = await findPage(db, 'things', { ...query, projection }, { maxTimeMS: 5000, signal: new AbortController().signal })
    t.same(commands, ['find'], `${JSON.stringify(query)}: one find, no getMore, no killCursors`)
    t.strictSame(page.starts.map((_, i) => decodeAt(page, i)), expected, `${JSON.stringify(query)}: the driver's documents`)
  }
})

t.test('the command: find first, one more in the batch than the limit, and the read concern the driver would send', async (t) => {
  const query = { filter: { n: 1 }, sort: { _id: 1 }, projection: { _id: 1 }, skip: 3, limit: 11 }
  const command = findCommand(db, 'things', query, 700)
  t.equal(Object.keys(command)[0], 'find')
  t.strictSame(command, { find: 'things', filter: { n: 1 }, sort: { _id: 1 }, projection: { _id: 1 }, skip: 3, limit: 11, batchSize: 12, maxTimeMS: 700 })
  const majority = new MongoClient('mongodb://127.0.0.1:1/?readConcernLevel=majority').db('x')
  t.strictSame(findCommand(majority, 'things', query, 700).readConcern, new ReadConcern('majority'))
  t.equal(command.readConcern, undefined, 'and none when the client has none')
})
