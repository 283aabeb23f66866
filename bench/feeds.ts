// The change feeds under load (docs/changes.md), on a service of their own against the database
// itself (a replay cannot answer change streams):
// - the list mix alone, and the same mix while 1,000 requests wait on feeds (long polls held
//   open by this process), interleaved: CPU per request, p99, and the service's pool connections;
// - a catch-up of 10,000 changes (events per CPU-second) against a list walk of the same
//   documents (documents per CPU-second);
// - the delivery lag: from a write's acknowledgement to the answers of requests waiting on it.
import http from 'node:http'
import { MongoClient, ObjectId, type Db } from 'mongodb'

export interface FeedRun { waiting: number, cpuUsPerRequest: number, p99: number, rps: number, poolConnections: number }

export interface FeedsResult {
  waiters: number
  runs: FeedRun[]
  catchUp: Array<{ changes: number, feedEventsPerCpuSecond: number, listDocumentsPerCpuSecond: number }>
  lag: { waiters: number, deliveries: number, p50: number, p99: number, max: number }
}

export interface FeedsContext {
  /** The service under test, its pid, and its metrics address. */
  url: string
  pid: number
  metricsUrl: string
  databaseUri: string
  databaseName: string
  mixPaths: string[]
  rounds: number
  measure: (paths: string[]) => Promise<{ cpuUsPerRequest: number, p99: number, rps: number }>
  cpuMicros: (pid: number) => number
}

const WAITERS = 1000
export const CATCH_UP = 10_000
const LAG_WAITERS = 200
export const LAG_WRITES = 30
export const LIST_WALKS = 5

interface Answer { events: Array<{ _id: string }>, next: string, synced: boolean }

async function getJson (agent: http.Agent, url: string): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode ?? 0} ${body.slice(0, 200)}`))
        else resolve(JSON.parse(body) as Answer)
      })
    }).on('error', reject)
  })
}

/** Follows a feed to an answer without events; returns its token. */
async function caughtUp (agent: http.Agent, feed: string, since?: string): Promise<string> {
  let next = since
  for (;;) {
    const answer = await getJson(agent, `${feed}?limit=1000${next === undefined ? '' : `&since=${next}`}`)
    next = answer.next
    if (answer.synced && answer.events.length === 0) return next
  }
}

/** Until the service says that `count` requests wait (each has read its first answer and sleeps). */
async function untilWaiting (metricsUrl: string, count: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const text = await (await fetch(`${metricsUrl}/metrics`)).text()
    if (Number(/^changes_requests_waiting (\S+)$/m.exec(text)?.[1] ?? NaN) >= count) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${count} requests never waited at once`)
}

async function poolConnections (metricsUrl: string): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text()
  return Number(/^mongodb_pool_connections (\S+)$/m.exec(text)?.[1] ?? NaN)
}

/** `count` requests that wait on `feeds` (in turn), each asked again as soon as it is answered, until stop(). */
function holdWaiters (
  agent: http.Agent, feeds: Array<{ url: string, token: string }>, count: number,
  onAnswer?: (at: number, answer: Answer) => void
): { stop: () => Promise<void>, failures: string[] } {
  const state = { stopped: false }
  const failures: string[] = []
  const loops = Array.from({ length: count }, async (_, i) => {
    const feed = feeds[i % feeds.length] as { url: string, token: string }
    let token = feed.token
    while (!state.stopped) {
      try {
        const answer = await getJson(agent, `${feed.url}?wait=30&since=${token}`)
        onAnswer?.(performance.now(), answer)
        token = answer.next
      } catch (error) {
        if (!state.stopped) failures.push((error as Error).message)
        return
      }
    }
  })
  return {
    failures,
    stop: async () => {
      state.stopped = true
      // Ends each wait: a write to every project followed wakes them.
      await Promise.all(loops)
    }
  }
}

/** What the three parts of the benchmark share: the service, its database and one feed per project. */
interface Bench {
  context: FeedsContext
  agent: http.Agent
  db: Db
  projects: ObjectId[]
  feeds: Array<{ url: string, token: string }>
}

/** The mix alone and beside WAITERS requests waiting on feeds, interleaved. */
async function mixBesideWaiters ({ context, agent, db, projects, feeds }: Bench): Promise<FeedRun[]> {
  await context.measure(context.mixPaths)
  const runs: FeedRun[] = []
  for (let round = 0; round < context.rounds; round++) {
    for (const waiting of round % 2 === 0 ? [0, WAITERS] : [WAITERS, 0]) {
      const held = waiting === 0 ? undefined : holdWaiters(agent, feeds, waiting)
      // Measured once every request waits: what their first answers cost is not the mix's.
      if (held !== undefined) {
        await untilWaiting(context.metricsUrl, waiting)
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
      const figure = await context.measure(context.mixPaths)
      const pool = await poolConnections(context.metricsUrl)
      if (held !== undefined) {
        const stopping = held.stop()
        for (const project of projects) await db.collection('registrations').insertOne({ project, role: 'wake-up' })
        await stopping
        if (held.failures.length > 0) {
          throw new Error(`waiting requests failed: ${held.failures.slice(0, 3).join('; ')}`)
        }
        await db.collection('registrations').deleteMany({ role: 'wake-up' })
      }
      runs.push({ waiting, ...figure, poolConnections: pool })
    }
    for (const feed of feeds) feed.token = await caughtUp(agent, feed.url, feed.token)
  }
  return runs
}

/** A catch-up of CATCH_UP changes against walks of a list of the same documents; the first feed then lists again. */
async function catchUpRounds ({ context, agent, db, projects, feeds }: Bench): Promise<FeedsResult['catchUp']> {
  const { url } = context
  const catchUp: FeedsResult['catchUp'] = []
  const project = projects[0] as ObjectId
  const feed = feeds[0] as { url: string, token: string }
  for (let round = 0; round < 3; round++) {
    const marker = `catch-up-${round}`
    const registrations = db.collection('registrations')
    if (round === 0) {
      for (let i = 0; i < CATCH_UP; i += 1000) {
        await registrations.insertMany(Array.from({ length: 1000 }, () => ({ project, role: marker })))
      }
    } else {
      await registrations.updateMany({ role: `catch-up-${round - 1}` }, { $set: { role: marker } })
    }
    // Let the shared stream bring them in, as it does between two answers of a follower: its
    // intake is paid once per change and replica, whatever the number of followers.
    await new Promise((resolve) => setTimeout(resolve, 6000))
    let before = context.cpuMicros(context.pid)
    let events = 0
    let token = feed.token
    for (;;) {
      const answer = await getJson(agent, `${feed.url}?limit=1000&since=${token}`)
      events += answer.events.length
      token = answer.next
      if (answer.events.length === 0) break
    }
    const feedCpu = context.cpuMicros(context.pid) - before
    feed.token = token
    before = context.cpuMicros(context.pid)
    let documents = 0
    let next: string | undefined
    const list = `${url}/projects/${project.toHexString()}/registrations?limit=1000&sort=%2B_id` +
      `&filter=${encodeURIComponent(JSON.stringify({ role: marker }))}`
    // Five walks: one walk is only a few of /proc's clock ticks of CPU.
    for (let walk = 0; walk < LIST_WALKS; walk++) {
      do {
        const page = await getJson(agent, `${list}${next === undefined ? '' : `&after=${next}`}`) as unknown as {
          data: unknown[], next?: string
        }
        documents += page.data.length
        next = page.next
      } while (next !== undefined)
    }
    const listCpu = context.cpuMicros(context.pid) - before
    if (events < CATCH_UP || documents !== CATCH_UP * LIST_WALKS) {
      throw new Error(`catch-up: ${events} events and ${documents} documents for ${CATCH_UP} changes`)
    }
    catchUp.push({
      changes: CATCH_UP,
      feedEventsPerCpuSecond: events / (feedCpu / 1e6),
      listDocumentsPerCpuSecond: documents / (listCpu / 1e6)
    })
  }
  await db.collection('registrations').deleteMany({ role: /^catch-up-/ })
  // Those 10,000 deletions fill the stand-in's whole oplog (10,000 entries): a token from before
  // them is older than its history (410, as on a MongoDB with an oplog that small). A new
  // listing instead.
  feed.token = await caughtUp(agent, feed.url)
  return catchUp
}

/** The delivery lag of LAG_WRITES writes to one project while LAG_WAITERS requests wait on it. */
async function deliveryLag ({ context, agent, db, projects, feeds }: Bench): Promise<FeedsResult['lag']> {
  const feed = feeds[0] as { url: string, token: string }
  const project = projects[0] as ObjectId
  const target = { url: feeds[1]?.url ?? feed.url, token: await caughtUp(agent, feeds[1]?.url ?? feed.url) }
  const written = new Map<string, number>()
  const lags: number[] = []
  const held = holdWaiters(agent, [target], LAG_WAITERS, (at, answer) => {
    for (const event of answer.events) {
      const at0 = written.get(event._id)
      if (at0 !== undefined) lags.push(at - at0)
    }
  })
  await untilWaiting(context.metricsUrl, LAG_WAITERS)
  const lagProject = projects[1] ?? project
  for (let i = 0; i < LAG_WRITES; i++) {
    const _id = new ObjectId()
    await db.collection('registrations').insertOne({ _id, project: lagProject, role: 'lag' })
    written.set(_id.toHexString(), performance.now())
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const stopping = held.stop()
  await db.collection('registrations').insertOne({ project: lagProject, role: 'wake-up' })
  await stopping
  await db.collection('registrations').deleteMany({ role: { $in: ['lag', 'wake-up'] } })
  const sorted = [...lags].sort((a, b) => a - b)
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN
  return { waiters: LAG_WAITERS, deliveries: lags.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? NaN }
}

export async function benchFeeds (context: FeedsContext): Promise<FeedsResult> {
  const { url, databaseUri, databaseName } = context
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity })
  const client = await new MongoClient(databaseUri).connect()
  try {
    const db = client.db(databaseName)
    const projects = (await db.collection('projects').find({}, { projection: { _id: 1 }, sort: { _id: 1 } }).toArray())
      .map((p) => p._id as ObjectId)
    const feedOf = (project: ObjectId): string => `${url}/projects/${project.toHexString()}/registrations/changes`
    const feeds = await Promise.all(projects.map(async (project) => ({
      url: feedOf(project), token: await caughtUp(agent, feedOf(project))
    })))
    const bench = { context, agent, db, projects, feeds }
    const runs = await mixBesideWaiters(bench)
    const catchUp = await catchUpRounds(bench)
    const lag = await deliveryLag(bench)
    return { waiters: WAITERS, runs, catchUp, lag }
  } finally {
    agent.destroy()
    await client.close()
  }
}
