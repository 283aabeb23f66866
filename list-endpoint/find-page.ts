// One list page, one `find` command, no cursor object. The page is read with Db#command and
// the `raw` option: the reply's `cursor` stays BSON and its first batch is handed to the
// transcoder (bson-json.ts) as it lies in the reply. The driver's find cursor (FindCursor with
// `raw`, then toArray) cost 1.6–2.9× as much client CPU for the same command, most of it per
// document (bench/driver-process.ts; docs/performance.md has the figures).
import { Long, type ClientSession, type Db, type Document, type ObjectId, type ReadConcernLike, type ReadPreferenceLike, type Sort } from 'mongodb'
import { isRetryableRead } from '../database/classify-error.js'
import { firstBatch, innerPage, pageOf, type Page } from './bson-page.js'

export interface PageQuery {
  filter: Document
  sort: Sort
  projection: Document
  skip: number
  /** The documents wanted (the page's limit and one more, to know whether a next page exists). */
  limit: number
}

export interface PageOptions {
  maxTimeMS: number
  signal: AbortSignal
  /**
   * A change feed's reads (changes/feed-reads.ts): a causally consistent session, whose
   * operationTime the driver sends as `afterClusterTime`, the read concern and the read
   * preference they need. Lists leave them out and read as the URI says.
   */
  session?: ClientSession
  readConcern?: ReadConcernLike
  readPreference?: ReadPreferenceLike
}

/**
 * The `find` command the driver's FindCursor would send for these options (operations/find.js
 * makeFindCommand), with the database's read concern, which it adds too. The batch is one
 * larger than the limit (as the driver makes it when the two are equal), so that the server
 * closes the cursor having returned the limit: one round trip, nothing left open.
 */
export function findCommand (db: Db, collection: string, { filter, sort, projection, skip, limit }: PageQuery, maxTimeMS: number, readConcern: ReadConcernLike | undefined = db.readConcern): Document {
  const command: Document = { find: collection, filter, sort, projection, skip, limit, batchSize: limit + 1, maxTimeMS }
  if (readConcern !== undefined) command.readConcern = readConcern
  return command
}

/**
 * Db#command is not retried by the driver, a `find` is (retryable reads: once, on a network
 * error or a state change such as a stepped-down primary, after selecting a server again).
 * So is the page's command, while the request still has time.
 */
function commandRetried (db: Db, command: Document, options: { readPreference: ReadPreferenceLike, signal: AbortSignal, session?: ClientSession }): Promise<Document> {
  const raw = { ...options, raw: true }
  return db.command(command, raw).catch((error: unknown) => {
    if (options.signal.aborted || db.client.options.retryReads === false || !isRetryableRead(error)) throw error
    return db.command(command, raw)
  })
}

/**
 * The page's documents as raw BSON. When the server keeps the cursor open (a first batch cut
 * short by its 16 MiB reply limit), the cursor is killed and the page read again through the
 * driver's cursor, which fetches the rest (getMore must come from the session that opened it).
 */
export async function findPage (db: Db, collection: string, query: PageQuery, { maxTimeMS, signal, session, readConcern, readPreference = db.readPreference }: PageOptions): Promise<Page> {
  const sessionOption = session === undefined ? {} : { session }
  const reply = await commandRetried(db, findCommand(db, collection, query, maxTimeMS, readConcern), { readPreference, signal, ...sessionOption })
  const cursor: unknown = reply.cursor
  if (!Buffer.isBuffer(cursor)) throw new Error('find-page: the driver decoded the cursor although `raw` was asked for')
  const { page, id } = firstBatch(cursor)
  if (id === 0n) return page
  db.command({ killCursors: collection, cursors: [Long.fromBigInt(id)] }, { readPreference }).catch(() => {
    // The server reaps an idle cursor itself (cursorTimeoutMillis, 10 minutes).
  })
  // A server that keeps the cursor open although the limit was returned: the page is whole.
  if (page.starts.length >= query.limit) return page
  const { filter, sort, projection, skip, limit } = query
  const readAll = () => db.collection(collection).find(filter, { projection, sort, skip, limit, raw: true, maxTimeMS, signal, readPreference, ...sessionOption, ...(readConcern === undefined ? {} : { readConcern }) }).toArray()
  // The driver retries the find, not a getMore: a cursor lost between batches (CursorNotFound
  // during a failover, say) or a broken connection is read again from the start, once.
  const docs = await readAll().catch((error: unknown) => {
    if (signal.aborted || db.client.options.retryReads === false || !isRetryableRead(error)) throw error
    return readAll()
  })
  return pageOf(docs as unknown as Buffer[])
}

/**
 * The same page and, in the same command, whether its project exists: an aggregate on
 * `projects` that matches the project and looks the page up beside it ($lookup with the page's
 * own pipeline, unwound, which MongoDB runs as one stage without building an array of the
 * whole page). So a list whose project is not remembered needs one connection and one round
 * trip, not two: on a slow database, two commands side by side need twice the connections.
 * The reply is `[]` when the project does not exist, `[{_id}]` when the page is empty, else
 * one `{_id, page}` per document, in the page's order.
 */
export function projectPageCommand (db: Db, collection: string, projectId: ObjectId, { filter, sort, projection, skip, limit }: PageQuery, maxTimeMS: number): Document {
  const page: Document[] = [{ $match: filter }, { $sort: sort }]
  if (skip > 0) page.push({ $skip: skip })
  page.push({ $limit: limit }, { $project: projection })
  const command: Document = {
    aggregate: 'projects',
    pipeline: [
      { $match: { _id: projectId } },
      { $project: { _id: 1 } },
      { $lookup: { from: collection, pipeline: page, as: 'page' } },
      { $unwind: { path: '$page', preserveNullAndEmptyArrays: true } }
    ],
    cursor: { batchSize: limit + 1 },
    maxTimeMS
  }
  if (db.readConcern !== undefined) command.readConcern = db.readConcern
  return command
}

/** MongoDB's refusals of a $lookup whose page is too large for one document or stage (16 MiB, 100 MiB). */
const TOO_LARGE = new Set([10334, 4568, 17419])

/**
 * A page of a project's list and whether the project exists, in one command. A page too large
 * for the reply's first batch is read again the way a remembered project's is, beside a lookup
 * of the project.
 */
export async function findProjectPage (db: Db, collection: string, projectId: ObjectId, query: PageQuery, options: PageOptions): Promise<{ exists: boolean, page: Page }> {
  const readPreference = db.readPreference
  let reply: Document
  try {
    reply = await commandRetried(db, projectPageCommand(db, collection, projectId, query, options.maxTimeMS), { readPreference, signal: options.signal })
  } catch (error) {
    if (!TOO_LARGE.has((error as { code?: number }).code ?? 0)) throw error
    return await apart(db, collection, projectId, query, options)
  }
  const cursor: unknown = reply.cursor
  if (!Buffer.isBuffer(cursor)) throw new Error('find-page: the driver decoded the cursor although `raw` was asked for')
  const { page, id } = firstBatch(cursor)
  if (id !== 0n) {
    db.command({ killCursors: 'projects', cursors: [Long.fromBigInt(id)] }, { readPreference }).catch(() => {})
    return await apart(db, collection, projectId, query, options)
  }
  return { exists: page.starts.length > 0, page: innerPage(page, 'page') }
}

async function apart (db: Db, collection: string, projectId: ObjectId, query: PageQuery, options: PageOptions): Promise<{ exists: boolean, page: Page }> {
  const [project, page] = await Promise.all([
    db.collection('projects').findOne({ _id: projectId }, { projection: { _id: 1 }, maxTimeMS: options.maxTimeMS, signal: options.signal }),
    findPage(db, collection, query, options)
  ])
  return { exists: project !== null, page }
}
