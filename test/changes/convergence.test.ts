// The feed's promise as a property: a random writer (inserts, updates that move documents in
// and out of several filters and between projects, replacements, deletions, writes to other
// projects) runs beside followers with different filters and fields, which ask two replicas
// in turn; one replica is restarted mid-way. At the end every copy equals its list, document
// for document, no event ever named a document that was never in the follower's project, and
// every remove's reason (deleted, unmatched, moved) is a state the writer's own log gave the
// document since the follower's previous answer (any state it had, where the majority point lags),
// and, where writes are majority committed as they are acknowledged, every answer without
// events comes with the copy already equal to the list.
// Then the database loses its history (dropped): every follower gets 410 at once, lists again,
// and converges. Seeded: FEED_SEED=<n> replays a run. On the stand-in it runs again on stand-ins
// as inconvenient as MongoDB is allowed to be (offline-mongodb/README.md, "Hazards"): slow
// replies, empty and short change-stream batches, a majority point that lags, expiring
// pre-images; each seeded, and each run must converge.
import { randomInt } from 'node:crypto'
import { MongoClient, ObjectId, type Document } from 'mongodb'
import t from 'tap'
import type { Test } from 'tap'
import { SeededRandom } from '../../demo-data/random.js'
import { start } from '../../offline-mongodb/server.js'
import { build } from '../helpers/build.js'
import { testDatabase, uniqueDatabaseName } from '../helpers/database.js'
import { FeedCopy, listAll, prepareFeeds, requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'

const feeds = await requireChangeStreams(t)

const SEED = Number(process.env.FEED_SEED ?? randomInt(1, 1_000_000))
const ROUNDS = Number(process.env.FEED_ROUNDS ?? 40)
const SECRET = 'a-convergence-secret-of-32-bytes-or-more'
const ROLES = ['volunteer', 'guest', 'staff', 'speaker']

/** Seeds of the runs on an inconvenient stand-in (FEED_HAZARD_SEEDS=a,b,c to choose). */
const HAZARD_SEEDS = (process.env.FEED_HAZARD_SEEDS ?? `${SEED + 1},${SEED + 2},${SEED + 3}`).split(',').map(Number)

t.setTimeout(400_000)

t.test(`followers converge on their lists (seed ${SEED})`, feeds, async (t) => {
  await converge(t, SEED, (await testDatabase()).uri, false)
})

t.test('and on a database as inconvenient as MongoDB is allowed to be', feeds, async (t) => {
  if ((await testDatabase()).kind !== 'offline-mongodb') {
    t.pass('the test database is a real MongoDB: its inconveniences are its own')
    return
  }
  // Each seed has a stand-in, a database and replicas of its own, and waits mostly on the
  // hazards' delays: the runs go side by side.
  t.jobs = HAZARD_SEEDS.length
  for (const seed of HAZARD_SEEDS) {
    t.test(`hazards seeded ${seed}`, async (t) => {
      // Pre-images expire after 60 writes: followers behind them answer 410 and list again.
      const standIn = await start({ port: 0, hazards: { seed, imagesKept: 60 } })
      t.teardown(standIn.close)
      await converge(t, seed, standIn.uri, true)
    })
  }
})

/** `expiring`: pre-images expire, so a follower far enough behind may answer 410 and list again. */
async function converge (t: Test, seed: number, uri: string, expiring: boolean): Promise<void> {
  const random = new SeededRandom(seed)
  const when = () => new Date(Date.UTC(2024, random.int(0, 11), random.int(1, 28)))
  const name = uniqueDatabaseName('feeds')
  const config = { CURSOR_SECRET: SECRET, MONGODB_DB: name }
  let replicas = [await build(t, { config, databaseUri: uri }), await build(t, { config, databaseUri: uri })]
  // The writer's own client: replicas come and go.
  // Acknowledged by the primary alone: a write may be answered before the majority point passes it.
  const client = await new MongoClient(uri, { writeConcern: { w: 1 } }).connect()
  t.teardown(async () => await client.close())
  const db = client.db(name)
  await prepareFeeds(db)
  const projects = [new ObjectId(), new ObjectId(), new ObjectId()]
  await db.collection('projects').insertMany(projects.map((_id, i) => ({ _id, name: `P${i}` })))
  const registrations = db.collection('registrations')
  await registrations.insertMany(Array.from({ length: 30 }, (_, i) => ({ project: projects[i % 3], role: random.pick(ROLES), createdAt: when() })))
  /** Every id that was ever in each project. */
  const everIn = new Map(projects.map((p) => [p.toHexString(), new Set<string>()]))
  /**
   * Each document's states, in the writer's order: its project, or absent. A feed reads at the
   * majority point, which may lag the writer's acknowledged writes (hazards): a remove's reason
   * is one of the states its document had since the follower's previous answer was read.
   */
  const states = new Map<string, Array<{ seq: number, project: string | null }>>()
  let seq = 0
  const note = async () => {
    seq++
    const present = new Set<string>()
    for (const doc of await registrations.find({}, { projection: { project: 1 } }).toArray()) {
      const id = doc._id.toHexString()
      everIn.get(String(doc.project))?.add(id)
      present.add(id)
      const history = states.get(id) ?? []
      if (history.at(-1)?.project !== String(doc.project)) history.push({ seq, project: String(doc.project) })
      states.set(id, history)
    }
    for (const [id, history] of states) if (!present.has(id) && history.at(-1)?.project !== null) history.push({ seq, project: null })
  }
  /** The reasons a remove of `id` from `project`'s feed may give, from the states since write `since`. */
  const reasonsSince = (id: string, project: string, since: number): Set<string> => {
    const history = states.get(id) ?? []
    const from = history.findLastIndex((state) => state.seq <= since)
    return new Set(history.slice(Math.max(0, from)).map((state) => state.project === null ? 'deleted' : state.project === project ? 'unmatched' : 'moved'))
  }
  /** The writes noted when each follower's previous answer was read. */
  const readAt = new Map<string, number>()
  await note()

  const [p0, p1] = projects.map(String) as [string, string]
  const q = (filter: Document) => `filter=${encodeURIComponent(JSON.stringify(filter))}`
  const followers = [
    { project: p0, copy: new FeedCopy(`/projects/${p0}/registrations/changes`, q({ role: 'volunteer' })) },
    { project: p0, copy: new FeedCopy(`/projects/${p0}/registrations/changes`, `${q({ role: { $in: ['guest', 'staff'] } })}&fields=role,createdAt`) },
    { project: p0, copy: new FeedCopy(`/projects/${p0}/registrations/changes`) },
    { project: p1, copy: new FeedCopy(`/projects/${p1}/registrations/changes`, q({ createdAt: { $gte: '2024-07-01' } })) },
    { project: p1, copy: new FeedCopy(`/projects/${p1}/registrations/changes`, `${q({ $or: [{ role: 'volunteer' }, { $and: [{ role: { $ne: 'guest' } }, { createdAt: { $lt: '2024-04-01' } }] }] })}&fields=role`) }
  ]
  /** A follower whose token expired (an image it needed expired) drops its copy and lists again. */
  const relist = (follower: typeof followers[number], body: string): void => {
    t.match(body, /CHANGES_EXPIRED/, 'a follower behind an expired image is told to list again')
    t.same([...follower.copy.seen].filter((id) => !(everIn.get(follower.project)?.has(id) ?? false)), [], 'its events named only documents of its project')
    follower.copy = new FeedCopy(follower.copy.path, follower.copy.query)
  }
  /** How many answers without events were checked against the list. */
  let emptyChecked = 0
  /** The reasons of removes checked, by reason. */
  const reasons = new Map<string, number>()
  let turn = 0
  const get = async (url: string) => await (replicas[turn++ % replicas.length] as (typeof replicas)[number]).inject(url)

  const write = async () => {
    const docs = await registrations.find({}, { projection: { _id: 1 } }).toArray()
    const someone = () => random.pick(docs)._id
    switch (random.int(0, 6)) {
      case 0: await registrations.insertOne({ project: random.pick(projects), role: random.pick(ROLES), createdAt: when() }); break
      case 1: await registrations.updateOne({ _id: someone() }, { $set: { role: random.pick(ROLES) } }); break
      case 2: await registrations.updateOne({ _id: someone() }, { $set: { project: random.pick(projects) } }); break
      case 3: await registrations.replaceOne({ _id: someone() }, { project: random.pick(projects), role: random.pick(ROLES), createdAt: when() }); break
      case 4: if (docs.length > 10) await registrations.deleteOne({ _id: someone() }); break
      case 5: await registrations.updateMany({ role: random.pick(ROLES) }, { $set: { createdAt: when() } }); break
      default: await registrations.updateOne({ _id: someone() }, { $unset: { role: '' } })
    }
  }

  for (let round = 0; round < ROUNDS; round++) {
    for (let i = random.int(0, 4); i > 0; i--) {
      await write()
      await note()
    }
    for (const follower of followers) {
      const res = await get(follower.copy.url(`limit=${random.int(1, 5)}`))
      if (expiring && res.statusCode === 410) {
        relist(follower, res.body)
        continue
      }
      t.equal(res.statusCode, 200, `round ${round}: ${res.body.slice(0, 200)}`)
      if (res.statusCode !== 200) continue
      const answer = JSON.parse(res.body) as FeedAnswer
      follower.copy.apply(answer)
      const key = `${follower.copy.path}?${follower.copy.query}`
      for (const event of answer.events) {
        if (event.type !== 'remove') continue
        // On a database whose majority point lags, an answer may read a state from before the
        // previous answer was read: any state the document had then counts.
        const possible = reasonsSince(event._id, follower.project, expiring ? 0 : readAt.get(key) ?? 0)
        if (!possible.has(String(event.reason))) t.fail(`round ${round}: ${event._id} left ${follower.copy.path} as ${String(event.reason)}; the writer's states since the previous answer say ${[...possible].join(' or ')}`)
        reasons.set(String(event.reason), (reasons.get(String(event.reason)) ?? 0) + 1)
      }
      readAt.set(key, seq)
      // Every write was acknowledged before this request (and, without hazards, is majority
      // committed): an answer without events says the copy already holds them all.
      if (!expiring && answer.synced && answer.events.length === 0) {
        const list = await listAll(get, follower.copy.path.replace('/changes', ''), follower.copy.query)
        if (JSON.stringify(follower.copy.sorted()) !== JSON.stringify(list)) t.same(follower.copy.sorted(), list, `round ${round}: ${key}: an answer without events, and the copy is the list`)
        emptyChecked++
      }
    }
    if (round === Math.floor(ROUNDS / 2)) {
      // A replica restarts: a new process, the same secret; tokens it issued go on elsewhere and after.
      await replicas[0]?.close()
      replicas = [await build(t, { config, databaseUri: uri }), replicas[1] as (typeof replicas)[number]]
    }
  }
  if (!expiring) t.ok(emptyChecked > 0, `${emptyChecked} answers without events, each with the copy equal to the list`)
  t.ok([...reasons.values()].reduce((a, b) => a + b, 0) > 0, `every remove's reason is one of the writer's states (${[...reasons].map(([reason, n]) => `${n} ${reason}`).join(', ')})`)
  for (const follower of followers) {
    // A write just before: the answer with no events that ends the catch-up must already hold it.
    await write()
    await note()
    for (let attempt = 0; ; attempt++) {
      const caught = await follower.copy.catchUp(get, 7).then(() => undefined, (error: Error) => error)
      if (caught === undefined) break
      if (!expiring || attempt > 2 || !caught.message.includes(': 410 ')) throw caught
      relist(follower, caught.message)
    }
    const { project, copy } = follower
    const list = copy.path.replace('/changes', '')
    t.same(copy.sorted(), await listAll(get, list, copy.query), `${copy.path}?${copy.query}: the copy equals the list`)
    const foreign = [...copy.seen].filter((id) => !(everIn.get(project)?.has(id) ?? false))
    t.same(foreign, [], 'no event named a document that was never in the project')
  }

  // The history is lost (the database dropped): 410 CHANGES_EXPIRED, then a relist converges.
  await db.dropDatabase()
  await prepareFeeds(db)
  await db.collection('projects').insertMany(projects.map((_id, i) => ({ _id, name: `P${i}` })))
  await registrations.insertMany(Array.from({ length: 5 }, (_, i) => ({ project: projects[0], role: 'volunteer', createdAt: new Date(Date.UTC(2024, i, 1)) })))
  for (const { copy } of followers) {
    const res = await get(copy.url())
    t.equal(res.statusCode, 410, `${copy.path}: a token from before the drop has expired, at once`)
    t.match(JSON.parse(res.body), { code: 'CHANGES_EXPIRED', errors: [{ param: 'since' }] })
    const fresh = new FeedCopy(copy.path, copy.query)
    await fresh.catchUp(get, 3)
    t.same(fresh.sorted(), await listAll(get, copy.path.replace('/changes', ''), copy.query), 'a relist converges')
  }
}
