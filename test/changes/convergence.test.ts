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
// and converges. Seeded: FEED_SEED=<n> replays a run (FEED_ROUNDS=<n> rounds, 40 by default).
// On the stand-in it runs again on stand-ins as inconvenient as MongoDB is allowed to be
// (offline-mongodb/README.md, "Hazards"): slow replies, empty and short change-stream batches,
// a majority point that lags, expiring pre-images; each seeded, and each run must converge.
import { randomInt } from 'node:crypto'
import { MongoClient, ObjectId, type Document } from 'mongodb'
import t from 'tap'
import type { Test } from 'tap'
import { SeededRandom } from '../../demo-data/random.js'
import { start } from '../../offline-mongodb/server.js'
import { build } from '../helpers/build.js'
import { testDatabase, uniqueDatabaseName } from '../helpers/database.js'
import { FeedCopy, prepareFeeds, requireChangeStreams } from '../helpers/feeds.js'
import {
  ROLES, catchUpAfterAWrite, dayOf2024, loseHistory, newWriter, note, readAnswer, write, type Follower, type Run
} from './convergence-steps.js'

const feeds = await requireChangeStreams(t)

const SEED = Number(process.env.FEED_SEED ?? randomInt(1, 1_000_000))
const ROUNDS = Number(process.env.FEED_ROUNDS ?? 40)
const SECRET = 'a-convergence-secret-of-32-bytes-or-more'

/** Seeds of the runs on an inconvenient stand-in (FEED_HAZARD_SEEDS=a,b,c to choose). */
const HAZARD_SEEDS = (process.env.FEED_HAZARD_SEEDS ?? `${SEED + 1},${SEED + 2},${SEED + 3}`)
  .split(',').map(Number)

t.setTimeout(400_000)

t.test(`followers converge on their lists (seed ${SEED})`, feeds, async (t) => {
  await converge(t, SEED, (await testDatabase()).uri, false)
})

t.test('and on a database as inconvenient as MongoDB is allowed to be', feeds, async (t) => {
  // The stand-in plays the hazards whatever the test database is: a real server's come when they come.
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
  await registrations.insertMany(Array.from({ length: 30 }, (_, i) =>
    ({ project: projects[i % 3], role: random.pick(ROLES), createdAt: dayOf2024(random) })))
  const writer = newWriter(random, projects, registrations)
  await note(writer)

  let turn = 0
  const get = async (url: string) => await (replicas[turn++ % replicas.length] as (typeof replicas)[number]).inject(url)
  const followers = followersOf(projects)
  const run: Run = {
    t, random, expiring, writer, followers, get, readAt: new Map(), emptyChecked: 0, reasons: new Map()
  }

  // FEED_ROUNDS rounds at least, and more (four times as many at most) until the run has checked a
  // remove and, where it can, an answer without events: a short run still shows both.
  const covered = (): boolean => run.reasons.size > 0 && (expiring || run.emptyChecked > 0)
  for (let round = 0; round < ROUNDS || (!covered() && round < 4 * ROUNDS); round++) {
    for (let i = random.int(0, 4); i > 0; i--) {
      await write(writer)
      await note(writer)
    }
    for (const follower of followers) await readAnswer(run, follower, round)
    if (round === Math.floor(ROUNDS / 2)) {
      // A replica restarts: a new process, the same secret; tokens it issued go on elsewhere and after.
      await replicas[0]?.close()
      replicas = [await build(t, { config, databaseUri: uri }), replicas[1] as (typeof replicas)[number]]
    }
  }
  const { emptyChecked, reasons } = run
  if (!expiring) t.ok(emptyChecked > 0, `${emptyChecked} answers without events, each with the copy equal to the list`)
  const removes = [...reasons.values()].reduce((a, b) => a + b, 0)
  const byReason = [...reasons].map(([reason, n]) => `${n} ${reason}`).join(', ')
  t.ok(removes > 0, `every remove's reason is one of the writer's states (${byReason})`)
  for (const follower of followers) await catchUpAfterAWrite(run, follower)

  await loseHistory(run, db)
}

/** The followers: different filters and fields, on the feeds of the first two projects. */
function followersOf (projects: ObjectId[]): Follower[] {
  const [p0, p1] = projects.map(String) as [string, string]
  const q = (filter: Document) => `filter=${encodeURIComponent(JSON.stringify(filter))}`
  const feed = (project: string) => `/projects/${project}/registrations/changes`
  const earlyNonGuest = { $and: [{ role: { $ne: 'guest' } }, { createdAt: { $lt: '2024-04-01' } }] }
  return [
    { project: p0, copy: new FeedCopy(feed(p0), q({ role: 'volunteer' })) },
    { project: p0, copy: new FeedCopy(feed(p0), `${q({ role: { $in: ['guest', 'staff'] } })}&fields=role,createdAt`) },
    { project: p0, copy: new FeedCopy(feed(p0)) },
    { project: p1, copy: new FeedCopy(feed(p1), q({ createdAt: { $gte: '2024-07-01' } })) },
    { project: p1, copy: new FeedCopy(feed(p1), `${q({ $or: [{ role: 'volunteer' }, earlyNonGuest] })}&fields=role`) }
  ]
}
