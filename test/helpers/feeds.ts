import { MongoClient, ObjectId, type Db, type Document } from 'mongodb'
import type { Test } from 'tap'
import { testDatabase } from './database.js'
import { ALL_LISTS } from './lists.js'

/** The collections of the kinds, as a deployment prepares them for change feeds: with pre- and post-images. */
export const FEED_COLLECTIONS = ALL_LISTS

/** A sharded cluster answers hello through mongos with this `msg` (the manual's "hello" command page). */
const isMongos = (hello: Document): boolean => hello.msg === 'isdbgrid'

export async function prepareFeeds (db: Db): Promise<void> {
  const sharded = isMongos(await db.admin().command({ hello: 1 }))
  for (const name of FEED_COLLECTIONS) {
    await db.createCollection(name, { changeStreamPreAndPostImages: { enabled: true } })
      .catch(async (error: { code?: number }) => {
        // Already there (created by an insert, say): images switched on in place.
        if (error.code !== 48) throw error
        await db.command({ collMod: name, changeStreamPreAndPostImages: { enabled: true } })
      })
    // Spread over the shards as a sharded deployment's would be: by hashed _id, one project's
    // documents on every shard (the manual's "Hashed Sharding"; no enableSharding since 6.0).
    if (sharded) await db.admin().command({ shardCollection: `${db.databaseName}.${name}`, key: { _id: 'hashed' } })
  }
}

/** The collections prepared for feeds, and one project: its feed of `kind` is `path`. */
export async function feedProject (db: Db, kind: string): Promise<{ project: ObjectId, path: string }> {
  await prepareFeeds(db)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'P' })
  return { project, path: `/projects/${String(project)}/${kind}/changes` }
}

let helloOnce: Promise<Document> | undefined
let reported = false

/** The test database's answer to `hello`, asked once a process. */
async function testHello (): Promise<Document> {
  helloOnce ??= (async () => {
    const client = await new MongoClient((await testDatabase()).uri, { serverSelectionTimeoutMS: 5000 }).connect()
    try {
      return await client.db('admin').command({ hello: 1 })
    } finally {
      await client.close()
    }
  })()
  return await helloOnce
}

/** Whether the test database is a sharded cluster, reached through mongos. */
export const throughMongos = async (): Promise<boolean> => isMongos(await testHello())

/** Why the test database cannot give change streams (a standalone server), or undefined. */
async function withoutChangeStreams (): Promise<string | undefined> {
  // As plugins/changes.ts tells one: no replica set name, and not a mongos.
  const hello = await testHello()
  if (typeof hello.setName === 'string' || isMongos(hello)) return undefined
  const which = (await testDatabase()).kind === 'external' ? 'MONGODB_URI names' : 'the embedded database is'
  return `change feed tests need a replica set or sharded cluster: ${which} a standalone server`
}

/**
 * The options of a file's feed tests. On a standalone server, where every feed answers 503, the
 * process fails once, saying so, and the feed tests are skipped rather than failing one by one.
 */
export async function requireChangeStreams (t: Test): Promise<{ skip?: string }> {
  const reason = await withoutChangeStreams()
  if (reason === undefined) return {}
  if (!reported) t.test('the database gives change streams', async (t) => { t.fail(reason) })
  reported = true
  return { skip: reason }
}

export interface FeedAnswer {
  events: Array<{
    type: 'upsert' | 'remove'
    _id: string
    document?: Document
    reason?: 'deleted' | 'unmatched' | 'moved'
  }>
  next: string
  synced: boolean
}

type Get = (url: string) => Promise<{ statusCode: number, body: string, headers: Record<string, unknown> }>

/** A copy kept by a feed: the documents by `_id`. */
export class FeedCopy {
  readonly documents = new Map<string, Document>()
  next: string | undefined
  synced = false
  /** Every `_id` an event named. */
  readonly seen = new Set<string>()
  answers = 0

  constructor (readonly path: string, readonly query = '') {}

  apply (answer: FeedAnswer): void {
    for (const event of answer.events) {
      this.seen.add(event._id)
      if (event.type === 'upsert') this.documents.set(event._id, event.document as Document)
      else this.documents.delete(event._id)
    }
    this.next = answer.next
    this.synced = answer.synced
    this.answers++
  }

  url (extra = ''): string {
    const parts = [this.query, this.next === undefined ? '' : `since=${this.next}`, extra]
      .filter((part) => part.length > 0)
    return `${this.path}${parts.length > 0 ? `?${parts.join('&')}` : ''}`
  }

  /** Follows the feed until an answer with no events after the listing; returns the number of answers read. */
  async catchUp (get: Get, limit = 50, maxAnswers = 1000): Promise<number> {
    for (let i = 0; i < maxAnswers; i++) {
      const res = await get(this.url(`limit=${limit}`))
      if (res.statusCode !== 200) throw new Error(`${this.url()}: ${res.statusCode} ${res.body}`)
      const answer = JSON.parse(res.body) as FeedAnswer
      this.apply(answer)
      if (answer.synced && answer.events.length === 0) return i + 1
    }
    throw new Error(`${this.path}: not caught up after ${maxAnswers} answers`)
  }

  /** The copy as a sorted list of JSON texts, to compare with a list's data. */
  sorted (): string[] {
    return [...this.documents.values()].map((doc) => JSON.stringify(doc)).sort()
  }
}

/** Every document a list returns (following its cursors), as sorted JSON texts. */
export async function listAll (get: Get, path: string, query = ''): Promise<string[]> {
  const all: string[] = []
  let url = `${path}?${query}${query.length > 0 ? '&' : ''}limit=1000&sort=%2B_id`
  for (let i = 0; i < 1000; i++) {
    const res = await get(url)
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
    const page = JSON.parse(res.body) as { data: Document[], next?: string }
    for (const doc of page.data) all.push(JSON.stringify(doc))
    if (page.next === undefined) return all.sort()
    url = `${path}?${query}${query.length > 0 ? '&' : ''}limit=1000&sort=%2B_id&after=${page.next}`
  }
  throw new Error(`${path}: more than 1000 pages`)
}
