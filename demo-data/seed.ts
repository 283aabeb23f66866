import { MongoClient } from 'mongodb'
import { generateDemoData, type DemoData } from './generate.js'

const BATCH = 1000

/** Replaces every demo collection of `dbName` with freshly generated data; returns the counts. */
export async function seedDemoData (uri: string, dbName: string, { scale = 1 } = {}): Promise<Record<keyof DemoData, number>> {
  const data = generateDemoData({ scale })
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 })
  try {
    await client.connect()
    const db = client.db(dbName)
    const counts = {} as Record<keyof DemoData, number>
    for (const [name, docs] of Object.entries(data) as Array<[keyof DemoData, DemoData[keyof DemoData]]>) {
      await db.collection(name).deleteMany({})
      for (let i = 0; i < docs.length; i += BATCH) await db.collection(name).insertMany(docs.slice(i, i + BATCH))
      counts[name] = docs.length
    }
    return counts
  } finally {
    await client.close()
  }
}
