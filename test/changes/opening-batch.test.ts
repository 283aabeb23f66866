// A read of its own through the real driver: caught up at its opening aggregate when that
// answer's token reaches the aggregate's own time (one round trip: the getMore the driver sends
// after it is not awaited), and never passing over an event that the same answer brought.
import type { FastifyBaseLogger } from 'fastify'
import { MongoClient, ObjectId } from 'mongodb'
import t, { type Test } from 'tap'
import { ChangeHub } from '../../changes/change-hub.js'
import { RecentChanges, type Gathered, type StreamPoint } from '../../changes/recent-changes.js'
import { readFrom, type StreamSource } from '../../changes/stream-read.js'
import { within } from '../../lib/pause.js'
import { uniqueDatabaseName } from '../helpers/database.js'
import { prepareFeeds, requireChangeStreams } from '../helpers/feeds.js'
import { proxiedDatabase } from '../faults/fault-app.js'

const feeds = await requireChangeStreams(t)
t.setTimeout(60_000)

const quiet = (): void => {}
const silent = { warn: quiet, info: quiet, error: quiet, debug: quiet } as unknown as FastifyBaseLogger
/** Far longer than a read takes here: a read that waits on its held getMore does not end within it. */
const BOUND_MS = 5000

interface Setting {
  /** Reads the changes of the project after the point the shared stream stood at. */
  read: () => Promise<Gathered>
  insert: () => Promise<ObjectId>
  /** Holds the database's reply to the next getMore, if one is sent, until the test ends. */
  holdGetMore: () => void
}

async function setUp (t: Test): Promise<Setting> {
  const proxy = await proxiedDatabase(t)
  const client = await new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 5000 }).connect()
  const db = client.db(uniqueDatabaseName('opening'))
  t.teardown(async () => {
    proxy.heal()
    await db.dropDatabase()
    await client.close()
  })
  await prepareFeeds(db)
  const sessions = db.collection('sessions')
  const project = new ObjectId()
  await sessions.insertOne({ project, name: 'before' })
  const source: StreamSource = { collection: () => sessions, client: () => client, maxTimeMS: 5000, scoped: true }
  // Where the shared stream stands once it follows: past every change so far.
  const hub = new ChangeHub({ ...source, capacity: 8, log: silent })
  await hub.ready()
  const point: StreamPoint = hub.position()
  await hub.stop()
  return {
    read: async () => await within(
      readFrom(source, new RecentChanges(8), point, project.toHexString(), 10, () => true,
        AbortSignal.timeout(BOUND_MS)),
      BOUND_MS, () => new Error(`no answer within ${BOUND_MS} ms`)),
    insert: async () => (await sessions.insertOne({ project, name: 'after' })).insertedId,
    holdGetMore: () => {
      const held = proxy.holdReply((command) => command.getMore !== undefined)
      t.teardown(held.release)
    }
  }
}

t.test('a quiet collection: the read is caught up at its opening aggregate, its getMore not awaited', feeds,
  async (t) => {
    const { read, holdGetMore } = await setUp(t)
    holdGetMore()
    const gathered = await read()
    t.match(gathered, { lost: false, ids: [] }, 'nothing changed, said while a getMore after it would be held')
  })

t.test('an opening answer of one event, its token at the aggregate\'s time: the event is read', feeds,
  async (t) => {
    const { read, insert } = await setUp(t)
    const id = await insert()
    const gathered = await read()
    t.same(gathered.lost ? 'lost' : gathered.ids.map(String), [String(id)], 'the change is in the answer')
  })
