// The demo writer (DEMO_WRITES=on with the embedded database, or `npm run demo:writes`): changes
// the first demo project's registrations and sessions every two seconds — a registration comes,
// one changes role, one leaves, a session is renamed — so that a change feed has something to
// show in Swagger UI and with curl (docs/changes.md). It never runs against MONGODB_URI.
import { MongoClient, type Document, type ObjectId } from 'mongodb'
import { ROLES } from './vocabulary.js'

export const DEMO_WRITE_INTERVAL_MS = 2000
/** At most this many registrations of its own at a time: the oldest leaves first. */
const MAX_OWN = 50

export interface DemoWriter {
  /** The project it writes to. */
  project: string
  stop: () => Promise<void>
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T

/** Calls `tick` every `ms` until the function it returns is called. */
export type Every = (tick: () => void, ms: number) => () => void
const every: Every = (tick, ms) => {
  const timer = setInterval(tick, ms)
  return () => { clearInterval(timer) }
}

// `schedule` is the writer's clock: a test passes its own, to make the writes one at a time.
export async function startDemoWriter (
  uri: string, dbName: string, log: (message: string) => void, intervalMs = DEMO_WRITE_INTERVAL_MS,
  schedule: Every = every
): Promise<DemoWriter> {
  const client = await new MongoClient(uri, { serverSelectionTimeoutMS: 5000 }).connect()
  const db = client.db(dbName)
  const project = (
    await db.collection('projects').find({}, { projection: { _id: 1 } }).sort({ _id: 1 }).limit(1).toArray()
  )[0]?._id as ObjectId | undefined
  if (project === undefined) {
    await client.close()
    throw new Error('the demo writer needs the demo data: no project found')
  }
  const own: ObjectId[] = []
  let n = 0
  const write = async (): Promise<string> => {
    const registrations = db.collection('registrations')
    switch (n++ % 4) {
      case 0: {
        if (own.length >= MAX_OWN) return 'enough added'
        const doc: Document = { project, name: `Visitor ${n}`, role: pick(ROLES), createdAt: new Date() }
        const { insertedId } = await registrations.insertOne(doc)
        own.push(insertedId)
        return `registration ${insertedId.toHexString()} added`
      }
      case 1: {
        const [doc] = await registrations.aggregate([
          { $match: { project } }, { $sample: { size: 1 } }, { $project: { _id: 1 } }
        ]).toArray()
        if (doc === undefined) return 'nothing to change'
        const role = pick(ROLES)
        await registrations.updateOne({ _id: doc._id }, { $set: { role } })
        return `registration ${String(doc._id)} is now ${role}`
      }
      case 2: {
        const id = own.shift()
        if (id === undefined) return 'nothing to remove yet'
        await registrations.deleteOne({ _id: id })
        return `registration ${id.toHexString()} removed`
      }
      default: {
        const [session] = await db.collection('sessions').aggregate([
          { $match: { project } }, { $sample: { size: 1 } }, { $project: { _id: 1, name: 1 } }
        ]).toArray()
        if (session === undefined) return 'no session'
        const name = `${String(session.name).replace(/ \(moved\)$/, '')}` +
          `${String(session.name).endsWith(' (moved)') ? '' : ' (moved)'}`
        await db.collection('sessions').updateOne({ _id: session._id }, { $set: { name } })
        return `session ${String(session._id)} renamed`
      }
    }
  }
  let running: Promise<void> = Promise.resolve()
  // One write at a time: a tick that finds one under way is skipped, so stop() waits for all.
  let busy = false
  const cancel = schedule(() => {
    if (busy) return
    busy = true
    running = write()
      .then((what) => { log(`demo writer: ${what}`) }, (error: Error) => { log(`demo writer: ${error.message}`) })
      .finally(() => { busy = false })
  }, intervalMs)
  return {
    project: project.toHexString(),
    stop: async () => {
      cancel()
      await running
      await client.close()
    }
  }
}
