// A collection's first feed request waits for its shared stream to answer: for the opening
// aggregate, never for the first getMore's wait on the server (the driver's first tryNext()
// sends both before it returns).
import type { FastifyBaseLogger } from 'fastify'
import t from 'tap'
import { ChangeHub } from '../../changes/change-hub.js'
import { standIn, testClock, within } from '../offline-mongodb/stand-in.js'

const quiet = (): void => {}
const silent = { warn: quiet, info: quiet, error: quiet, debug: quiet } as unknown as FastifyBaseLogger

t.test('the hub is ready once its stream has opened, while the first getMore still waits', async (t) => {
  // The stand-in's getMore waits end only when this test says so.
  const clock = testClock()
  const { client, dbName } = await standIn(t, { clock })
  const db = client.db(dbName())
  const sessions = await db.createCollection('sessions', { changeStreamPreAndPostImages: { enabled: true } })
  const hub = new ChangeHub({
    collection: () => sessions, client: () => client, maxTimeMS: 5000, scoped: true, capacity: 8, log: silent
  })
  t.teardown(async () => await hub.stop())
  const ready = hub.ready()
  const getMore = await clock.next('the shared stream\'s first getMore')
  t.equal(getMore.ms, 1000, 'its getMore waits on the server')
  await within(ready, 5000, 'the hub ready while that wait goes on')
  t.ok(hub.isRunning, 'running')
  t.ok(hub.position().resumeToken !== undefined, 'at the position the opening batch gave')
  // A change still comes through the same stream: it ends the waiting getMore.
  await sessions.insertOne({ name: 'a' })
  t.equal(await within(getMore.ended, 5000, 'the getMore answered'), 'cancelled',
    'the write answered the getMore before its time')
})
