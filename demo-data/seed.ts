import { MongoClient, type Db } from 'mongodb'
import { generateDemoData, type DemoData } from './generate.js'

const BATCH = 1000

/**
 * Change feeds need the pre- and post-images of a change (docs/changes.md): the collection is
 * created with them, or given them when it exists. A standalone server has no change streams
 * and refuses the option; the lists do not need it, so the seed goes on without.
 */
async function enableImages (db: Db, name: string): Promise<void> {
  const images = { changeStreamPreAndPostImages: { enabled: true } }
  try {
    await db.createCollection(name, images)
  } catch (error) {
    if ((error as { code?: number }).code !== 48) return
    await db.command({ collMod: name, ...images }).catch(() => {})
  }
}

/** Replaces every demo collection of `dbName` with freshly generated data; returns the counts. */
export async function seedDemoData (
  uri: string, dbName: string, { scale = 1 } = {}
): Promise<Record<keyof DemoData, number>> {
  const data = generateDemoData({ scale })
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 })
  try {
    await client.connect()
    const db = client.db(dbName)
    const counts = {} as Record<keyof DemoData, number>
    for (const [name, docs] of Object.entries(data) as Array<[keyof DemoData, DemoData[keyof DemoData]]>) {
      await enableImages(db, name)
      await db.collection(name).deleteMany({})
      for (let i = 0; i < docs.length; i += BATCH) await db.collection(name).insertMany(docs.slice(i, i + BATCH))
      counts[name] = docs.length
    }
    return counts
  } finally {
    await client.close()
  }
}
