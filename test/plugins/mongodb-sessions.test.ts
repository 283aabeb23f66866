// The driver's set of sessions in use is a SlotSet (plugins/mongodb.ts, slot-set.ts): this test
// holds the driver to what that assumes, and the sessions to what the driver does with them.
import { MongoClient } from 'mongodb'
import t from 'tap'
import { withSlotSessions } from '../../plugins/mongodb.js'
import { SlotSet } from '../../lib/slot-set.js'
import { chooseShims, driverVersion, VERIFIED_DRIVER } from '../../database/driver-shims.js'
import { build } from '../helpers/build.js'
import { testDatabase, uniqueDatabaseName } from '../helpers/database.js'

type Sessions = { size: number } & Iterable<unknown>
const sessionsOf = (client: MongoClient): Sessions | undefined =>
  (client as unknown as { s?: { activeSessions?: Sessions } }).s?.activeSessions

t.test('the driver keeps its sessions in a Set on the client, which withSlotSessions replaces', async (t) => {
  const { uri } = await testDatabase()
  const plain = new MongoClient(uri)
  t.type(sessionsOf(plain), Set, 'the driver version in the lock file holds its sessions as assumed; ' +
    'if not, the replacement is skipped and this fails')
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

t.test('the shims are checked against the driver they were tested with, and can be turned off', async (t) => {
  const [major, minor] = driverVersion().split('.')
  t.equal(`${major}.${minor}`, VERIFIED_DRIVER, 'the driver in the lock file is the one the shim was checked with: ' +
    'after an update, run these tests on it, then move VERIFIED_DRIVER')
  t.same([...chooseShims('all').on], ['slot-sessions'])
  t.same([...chooseShims('none').on], [])
  const newer = chooseShims('all', `${major ?? '0'}.${Number(minor) + 1}.0`)
  t.same([...newer.on], [], 'another minor version of the driver: every shim off')
  t.match(newer.warning, /not the version the driver shims were checked with/)

  const logLines: Array<Record<string, unknown>> = []
  const fastify = await build(t, { config: { SHIMS: 'none' }, logLines })
  t.same([...fastify.database.shims], [])
  t.type(sessionsOf(fastify.mongo.client), Set, 'the driver keeps its own Set')
  let seen: unknown
  await fastify.database.bounded(async (signal) => {
    seen = signal
    return await fastify.database.db().command({ ping: 1 }, { signal })
  })
  t.type(seen, AbortSignal, 'operations get a real AbortSignal')
  t.notOk(logLines.some((line) => String(line.msg).includes('driver shims')), 'turned off by hand: no warning')
})

t.test('the shims are on by default', {
  skip: process.env.SHIMS === undefined
    ? false
    : `SHIMS=${process.env.SHIMS} in this environment (as in .ci/run's run on the driver's public path): ` +
      'build() passes it on, so the default is not what is built'
}, async (t) => {
  const on = await build(t)
  t.same([...on.database.shims], ['slot-sessions'], 'on by default')
  t.type(sessionsOf(on.mongo.client), SlotSet)
})
