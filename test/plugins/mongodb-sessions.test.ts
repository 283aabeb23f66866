// The driver's set of sessions in use is a SlotSet (plugins/mongodb.ts, slot-set.ts): this test
// holds the driver to what that assumes, and the sessions to what the driver does with them.
import { MongoClient } from 'mongodb'
import t from 'tap'
import { withSlotSessions } from '../../plugins/mongodb.js'
import { SlotSet } from '../../slot-set.js'
import { testDatabase, uniqueDatabaseName } from '../helpers/database.js'

type Sessions = { size: number } & Iterable<unknown>
const sessionsOf = (client: MongoClient): Sessions | undefined => (client as unknown as { s?: { activeSessions?: Sessions } }).s?.activeSessions

t.test('the driver keeps its sessions in a Set on the client, which withSlotSessions replaces', async (t) => {
  const { uri } = await testDatabase()
  const plain = new MongoClient(uri)
  t.type(sessionsOf(plain), Set, 'the driver version in the lock file holds its sessions as assumed; if not, the replacement is skipped and this fails')
  const client = withSlotSessions(new MongoClient(uri, { serverSelectionTimeoutMS: 5000 }))
  t.type(sessionsOf(client), SlotSet)
  t.teardown(async () => await client.close())
  const db = client.db(uniqueDatabaseName('sessions'))
  await Promise.all(Array.from({ length: 20 }, async () => await db.command({ ping: 1 })))
  t.equal(sessionsOf(client)?.size, 0, 'every implicit session leaves the set when its operation ends')

  const explicit = client.startSession()
  const other = client.startSession()
  t.equal(sessionsOf(client)?.size, 2, 'explicit sessions are held while open')
  await other.endSession()
  t.equal(sessionsOf(client)?.size, 1)
  await client.close()
  t.ok(explicit.hasEnded, 'closing the client ends the sessions still open')
  t.equal(sessionsOf(client)?.size, 0)
})

t.test('a client whose sessions are already in use is left alone', async (t) => {
  const { uri } = await testDatabase()
  const client = new MongoClient(uri)
  t.teardown(async () => await client.close())
  const session = client.startSession()
  const before = sessionsOf(client)
  t.equal(withSlotSessions(client), client)
  t.equal(sessionsOf(client), before, 'not swapped under an open session')
  await session.endSession()
})
