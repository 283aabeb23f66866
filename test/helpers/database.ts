import { randomBytes } from 'node:crypto'
import { MongoClient, type Db, type MongoClientOptions } from 'mongodb'
import tap from 'tap'
import { chooseDatabase, describeDatabase, type ChosenDatabase } from '../../process/choose-database.js'

let chosen: Promise<ChosenDatabase> | undefined

/**
 * The database of this test process, picked by the same module as `server.ts`
 * (MONGODB_URI, else a local mongod, else the offline stand-in), closed when the file's tests end.
 */
export async function testDatabase (): Promise<ChosenDatabase> {
  if (chosen === undefined) {
    chosen = chooseDatabase()
    const db = await chosen
    tap.comment(describeDatabase(db))
    tap.teardown(db.close)
  }
  return await chosen
}

/** A database name no other test uses, so tests never see each other's documents. */
export function uniqueDatabaseName (prefix = 'test'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`
}

/**
 * A connected client of the test process's database and a database of the file's own (named
 * after `prefix`), dropped and closed when the file's tests end.
 */
export async function clientOfTestDatabase (
  prefix: string,
  options: MongoClientOptions = {}
): Promise<{ client: MongoClient, db: Db }> {
  const client = await new MongoClient((await testDatabase()).uri,
    { serverSelectionTimeoutMS: 5000, ...options }).connect()
  const db = client.db(uniqueDatabaseName(prefix))
  tap.teardown(async () => {
    await db.dropDatabase()
    await client.close()
  })
  return { client, db }
}
