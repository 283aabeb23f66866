// The shared stream of a collection: its recent changes, in order, routed by the projects of
// their images; a point older than what it keeps is read by a stream of its own, which joins it.
import { ObjectId } from 'mongodb'
import type { FastifyBaseLogger } from 'fastify'
import t from 'tap'
import { ChangeHub } from '../../changes/change-hub.js'
import { clientOfTestDatabase } from '../helpers/database.js'
import { prepareFeeds, requireChangeStreams } from '../helpers/feeds.js'

const feeds = await requireChangeStreams(t)

/**
 * Resolves once the hub has taken in its changes up to `seq`, woken by them as a waiting request
 * is (a wait for any project hears every change); rejects if that takes more than `ms`.
 */
async function reached (hub: ChangeHub, seq: number, ms = 15_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  let cancel = (): void => {}
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Error(`the hub did not reach ${seq} within ${ms} ms`)) }, ms)
  })
  try {
    // Read and wait in one turn: a change that comes after the read wakes the wait.
    while ((hub.position().seq ?? 0) < seq) {
      await Promise.race([new Promise<void>((resolve) => { cancel = hub.wait(undefined, resolve) }), late])
    }
  } finally {
    cancel()
    clearTimeout(timer)
  }
}

const quiet = (): void => {}
const silent = { warn: quiet, info: quiet, error: quiet, debug: quiet } as unknown as FastifyBaseLogger

t.test('recent changes, routed by project; an older point is read on its own and joins', feeds, async (t) => {
  const { client, db } = await clientOfTestDatabase('hub')
  await prepareFeeds(db)
  const sessions = db.collection('sessions')
  const hub = new ChangeHub({
    collection: () => sessions, client: () => client, maxTimeMS: 5000, scoped: true, capacity: 8, log: silent
  })
  t.teardown(async () => await hub.stop())
  await hub.ready()
  const start = hub.position()
  const [a, b] = [new ObjectId(), new ObjectId()]
  const ids: ObjectId[] = []
  for (let i = 0; i < 20; i++) {
    ids.push((await sessions.insertOne({ project: i % 2 === 0 ? a : b, name: `s${i}` })).insertedId)
  }
  const moved = (await sessions.insertOne({ project: a, name: 'moves' })).insertedId
  await sessions.updateOne({ _id: moved }, { $set: { project: b } })
  await reached(hub, (start.seq ?? 0) + 22)
  t.equal(hub.position().seq, (start.seq ?? 0) + 22, 'the stream brought the 22 changes, and no more')
  t.equal(hub.locate(start), undefined, 'a point older than the kept changes is not among them')

  const signal = new AbortController().signal
  const all = () => true
  const fromStart = await hub.readFrom(start, a.toHexString(), 100, all, signal)
  if (fromStart.lost) throw new Error('lost')
  t.same(fromStart.ids.map(String), [...ids.filter((_, i) => i % 2 === 0), moved].map(String),
    'read on its own: project a\'s documents, and the one that moved away')
  t.not(hub.locate(fromStart.point), undefined, 'the point it reached joins the recent changes')

  const paged = await hub.readFrom(start, b.toHexString(), 3, all, signal)
  if (paged.lost) throw new Error('lost')
  t.same(paged.ids.map(String), ids.filter((_, i) => i % 2 === 1).slice(0, 3).map(String), 'at most limit documents')
  const rest = hub.locate(paged.point) === undefined
    ? await hub.readFrom(paged.point, b.toHexString(), 100, all, signal)
    : hub.gather(hub.locate(paged.point) as number, b.toHexString(), 100, all)
  if (rest.lost) throw new Error('lost')
  t.same(rest.ids.map(String), [...ids.filter((_, i) => i % 2 === 1).slice(3), moved].map(String),
    'then the rest, from its point; the moved document is in b\'s too')

  const recent = hub.position()
  const last = (await sessions.insertOne({ project: a, name: 'last' })).insertedId
  await reached(hub, (recent.seq ?? 0) + 1)
  t.equal(hub.position().seq, (recent.seq ?? 0) + 1)
  const gathered = hub.gather(hub.locate(recent) as number, a.toHexString(), 10, all)
  if (gathered.lost) throw new Error('lost')
  t.same(gathered.ids.map(String), [String(last)], 'a recent point reads from memory')
  const other = hub.gather(hub.locate(recent) as number, b.toHexString(), 10, all)
  t.same(other.lost ? 'lost' : other.ids, [], 'another project sees nothing of it')
})
