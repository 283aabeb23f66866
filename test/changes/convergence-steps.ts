// The steps of convergence.test.ts: the writer and its log, a follower's answer in a round, the
// catch-up at the end, and the history lost.
import type { Collection, Db, ObjectId } from 'mongodb'
import type { Test } from 'tap'
import type { SeededRandom } from '../../demo-data/random.js'
import { FeedCopy, listAll, prepareFeeds, type FeedAnswer } from '../helpers/feeds.js'

export const ROLES = ['volunteer', 'guest', 'staff', 'speaker']

type Get = (url: string) => Promise<{ statusCode: number, body: string, headers: Record<string, unknown> }>

/** A follower of one project's feed: the copy it keeps. */
export interface Follower {
  project: string
  copy: FeedCopy
}

/** The writer: its randomness, its collection, and its own log of what it did. */
export interface Writer {
  random: SeededRandom
  projects: ObjectId[]
  registrations: Collection
  /** Every id that was ever in each project. */
  everIn: Map<string, Set<string>>
  /**
   * Each document's states, in the writer's order: its project, or absent. A feed reads at the
   * majority point, which may lag the writer's acknowledged writes (hazards): a remove's reason
   * is one of the states its document had since the follower's previous answer was read.
   */
  states: Map<string, Array<{ seq: number, project: string | null }>>
  /** How many times the writes were noted. */
  seq: number
}

/** What the steps of one run share. */
export interface Run {
  t: Test
  /** The run's randomness (the writer's too): the followers' page sizes. */
  random: SeededRandom
  /** Pre-images expire, so a follower far enough behind may answer 410 and list again. */
  expiring: boolean
  writer: Writer
  followers: Follower[]
  /** Asks the replicas in turn. */
  get: Get
  /** The writes noted when each follower's previous answer was read. */
  readAt: Map<string, number>
  /** How many answers without events were checked against the list. */
  emptyChecked: number
  /** The reasons of removes checked, by reason. */
  reasons: Map<string, number>
}

/** A random day of 2024 (the 1st to the 28th of a month). */
export function dayOf2024 (random: SeededRandom): Date {
  return new Date(Date.UTC(2024, random.int(0, 11), random.int(1, 28)))
}

/** A writer of `registrations` with an empty log. */
export function newWriter (random: SeededRandom, projects: ObjectId[], registrations: Collection): Writer {
  const everIn = new Map(projects.map((p) => [p.toHexString(), new Set<string>()]))
  return { random, projects, registrations, everIn, states: new Map(), seq: 0 }
}

/** Notes every document's state after the writes so far: the projects it was in, and its new state. */
export async function note (writer: Writer): Promise<void> {
  const { everIn, states } = writer
  writer.seq++
  const present = new Set<string>()
  for (const doc of await writer.registrations.find({}, { projection: { project: 1 } }).toArray()) {
    const id = doc._id.toHexString()
    everIn.get(String(doc.project))?.add(id)
    present.add(id)
    const history = states.get(id) ?? []
    if (history.at(-1)?.project !== String(doc.project)) history.push({ seq: writer.seq, project: String(doc.project) })
    states.set(id, history)
  }
  for (const [id, history] of states) {
    if (!present.has(id) && history.at(-1)?.project !== null) history.push({ seq: writer.seq, project: null })
  }
}

/** The reasons a remove of `id` from `project`'s feed may give, from the states since write `since`. */
export function reasonsSince (writer: Writer, id: string, project: string, since: number): Set<string> {
  const history = writer.states.get(id) ?? []
  const from = history.findLastIndex((state) => state.seq <= since)
  return new Set(history.slice(Math.max(0, from)).map((state) =>
    state.project === null ? 'deleted' : state.project === project ? 'unmatched' : 'moved'))
}

/** A new registration in a random project, with a random role and day. */
function someRegistration ({ random, projects }: Writer): { project: ObjectId, role: string, createdAt: Date } {
  return { project: random.pick(projects), role: random.pick(ROLES), createdAt: dayOf2024(random) }
}

/** One random write: moves documents in and out of the filters and between projects, or deletes one. */
export async function write (writer: Writer): Promise<void> {
  const { random, projects, registrations } = writer
  const docs = await registrations.find({}, { projection: { _id: 1 } }).toArray()
  const someone = () => random.pick(docs)._id
  switch (random.int(0, 6)) {
    case 0: await registrations.insertOne(someRegistration(writer)); break
    case 1: await registrations.updateOne({ _id: someone() }, { $set: { role: random.pick(ROLES) } }); break
    case 2: await registrations.updateOne({ _id: someone() }, { $set: { project: random.pick(projects) } }); break
    case 3: await registrations.replaceOne({ _id: someone() }, someRegistration(writer)); break
    case 4: if (docs.length > 10) await registrations.deleteOne({ _id: someone() }); break
    case 5:
      await registrations.updateMany({ role: random.pick(ROLES) }, { $set: { createdAt: dayOf2024(random) } })
      break
    default: await registrations.updateOne({ _id: someone() }, { $unset: { role: '' } })
  }
}

/** The ids the follower's events named that were never in its project. */
function foreignIds (writer: Writer, follower: Follower): string[] {
  return [...follower.copy.seen].filter((id) => !(writer.everIn.get(follower.project)?.has(id) ?? false))
}

/** A follower whose token expired (an image it needed expired) drops its copy and lists again. */
function relist (run: Run, follower: Follower, body: string): void {
  run.t.match(body, /CHANGES_EXPIRED/, 'a follower behind an expired image is told to list again')
  run.t.same(foreignIds(run.writer, follower), [], 'its events named only documents of its project')
  follower.copy = new FeedCopy(follower.copy.path, follower.copy.query)
}

/** Each remove in an answer gives a reason that is a state the writer's log gave its document. */
function checkRemoves (run: Run, follower: Follower, answer: FeedAnswer, round: number, key: string): void {
  for (const event of answer.events) {
    if (event.type !== 'remove') continue
    // On a database whose majority point lags, an answer may read a state from before the
    // previous answer was read: any state the document had then counts.
    const since = run.expiring ? 0 : run.readAt.get(key) ?? 0
    const possible = reasonsSince(run.writer, event._id, follower.project, since)
    if (!possible.has(String(event.reason))) {
      run.t.fail(`round ${round}: ${event._id} left ${follower.copy.path} as ${String(event.reason)}; ` +
        `the writer's states since the previous answer say ${[...possible].join(' or ')}`)
    }
    run.reasons.set(String(event.reason), (run.reasons.get(String(event.reason)) ?? 0) + 1)
  }
}

/** A follower's answer in a round: applied, its removes checked, and if it has no events, its copy against the list. */
export async function readAnswer (run: Run, follower: Follower, round: number): Promise<void> {
  const { t, get } = run
  const res = await get(follower.copy.url(`limit=${run.random.int(1, 5)}`))
  if (run.expiring && res.statusCode === 410) {
    relist(run, follower, res.body)
    return
  }
  t.equal(res.statusCode, 200, `round ${round}: ${res.body.slice(0, 200)}`)
  if (res.statusCode !== 200) return
  const answer = JSON.parse(res.body) as FeedAnswer
  follower.copy.apply(answer)
  const key = `${follower.copy.path}?${follower.copy.query}`
  checkRemoves(run, follower, answer, round, key)
  run.readAt.set(key, run.writer.seq)
  // Every write was acknowledged before this request (and, without hazards, is majority
  // committed): an answer without events says the copy already holds them all.
  if (!run.expiring && answer.synced && answer.events.length === 0) {
    const list = await listAll(get, follower.copy.path.replace('/changes', ''), follower.copy.query)
    if (JSON.stringify(follower.copy.sorted()) !== JSON.stringify(list)) {
      t.same(follower.copy.sorted(), list, `round ${round}: ${key}: an answer without events, and the copy is the list`)
    }
    run.emptyChecked++
  }
}

/** At the end, after one more write, a follower catches up: its copy equals its list. */
export async function catchUpAfterAWrite (run: Run, follower: Follower): Promise<void> {
  const { t, get, writer } = run
  // A write just before: the answer with no events that ends the catch-up must already hold it.
  await write(writer)
  await note(writer)
  for (let attempt = 0; ; attempt++) {
    const caught = await follower.copy.catchUp(get, 7).then(() => undefined, (error: Error) => error)
    if (caught === undefined) break
    if (!run.expiring || attempt > 2 || !caught.message.includes(': 410 ')) throw caught
    relist(run, follower, caught.message)
  }
  const { copy } = follower
  const list = copy.path.replace('/changes', '')
  t.same(copy.sorted(), await listAll(get, list, copy.query), `${copy.path}?${copy.query}: the copy equals the list`)
  t.same(foreignIds(writer, follower), [], 'no event named a document that was never in the project')
}

/** The history is lost (the database dropped): 410 CHANGES_EXPIRED, then a relist converges. */
export async function loseHistory (run: Run, db: Db): Promise<void> {
  const { t, get, writer: { projects, registrations } } = run
  await db.dropDatabase()
  await prepareFeeds(db)
  await db.collection('projects').insertMany(projects.map((_id, i) => ({ _id, name: `P${i}` })))
  await registrations.insertMany(Array.from({ length: 5 }, (_, i) =>
    ({ project: projects[0], role: 'volunteer', createdAt: new Date(Date.UTC(2024, i, 1)) })))
  for (const { copy } of run.followers) {
    const res = await get(copy.url())
    t.equal(res.statusCode, 410, `${copy.path}: a token from before the drop has expired, at once`)
    t.match(JSON.parse(res.body), { code: 'CHANGES_EXPIRED', errors: [{ param: 'since' }] })
    const fresh = new FeedCopy(copy.path, copy.query)
    await fresh.catchUp(get, 3)
    t.same(fresh.sorted(), await listAll(get, copy.path.replace('/changes', ''), copy.query), 'a relist converges')
  }
}
