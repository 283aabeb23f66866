// One list page, one `find` command, no cursor object: the page is read with Db#command and the
// `raw` option, and the reply's first batch goes to the transcoder (bson-json.ts) as it lies.
// The driver's FindCursor costs more client CPU per document (docs/performance.md). A driver
// that decodes the reply's `cursor` although `raw` was asked for gets the public cursor path.
import {
  Long, type ClientSession, type CollationOptions, type Db, type Document, type ObjectId, type ReadConcernLike,
  type ReadPreferenceLike, type Sort
} from 'mongodb'
import { isRetryableRead } from '../database/classify-error.js'
import { MalformedBson } from './bson-elements.js'
import { firstBatch, innerPage, pageOf, type Page } from './bson-page.js'

export interface PageQuery {
  filter: Document
  sort: Sort
  projection: Document
  skip: number
  /** The documents wanted (the page's limit and one more, to know whether a next page exists). */
  limit: number
  /** The service's collation (database/collation.ts); none for binary order. */
  collation?: CollationOptions
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
export function findCommand (
  db: Db, collection: string, { filter, sort, projection, skip, limit, collation }: PageQuery, maxTimeMS: number,
  readConcern: ReadConcernLike | undefined = db.readConcern
): Document {
  const command: Document = { find: collection, filter, sort, projection, skip, limit, batchSize: limit + 1, maxTimeMS }
  if (collation !== undefined) command.collation = collation
  if (readConcern !== undefined) command.readConcern = readConcern
  return command
}

/**
 * Db#command is not retried by the driver, a `find` is (retryable reads: once, on a network
 * error or a state change such as a stepped-down primary, after selecting a server again).
 * So is the page's command, while the request still has time.
 */
function commandRetried (
  db: Db, command: Document,
  options: { readPreference: ReadPreferenceLike, signal: AbortSignal, session?: ClientSession }
): Promise<Document> {
  const raw = { ...options, raw: true }
  return readRetried(db, options.signal, () => db.command(command, raw))
}

/**
 * Clients whose `raw` command replies came back decoded (a driver that no longer keeps a reply's
 * `cursor` as BSON): their pages are read through the driver's public cursors from then on.
 */
const decodedReplies = new WeakSet<object>()

/** Kills a cursor the server left open; it reaps an idle one itself anyway (cursorTimeoutMillis, 10 minutes). */
export function kill (db: Db, collection: string, id: bigint, readPreference: ReadPreferenceLike): void {
  if (id === 0n) return
  db.command({ killCursors: collection, cursors: [Long.fromBigInt(id)] }, { readPreference }).catch(() => {})
}

/**
 * A cursor the driver decoded (`{firstBatch: [...]}`): a count's, or a `raw` reply's that did not
 * stay BSON, after which the driver's public cursors read the pages. Anything else, or no cursor
 * at all, is a damaged reply (503), which must not turn the client's pages to the slower path.
 */
export function checkDecoded (cursor: unknown): asserts cursor is { firstBatch: unknown[] } {
  if (cursor === null || typeof cursor !== 'object' ||
    !Array.isArray((cursor as { firstBatch?: unknown }).firstBatch)) {
    throw new MalformedBson('the reply holds no cursor document')
  }
}

/** The id of a cursor reply the driver decoded (`{firstBatch, id, ns}`), 0 when there is none. */
export function decodedId (cursor: unknown): bigint {
  const id = (cursor as { id?: unknown } | undefined)?.id
  if (typeof id === 'number' || typeof id === 'bigint') return BigInt(id)
  return id instanceof Long ? id.toBigInt() : 0n
}

/**
 * Sends a cursor's command again, once, on what the driver itself retries a find on, while the
 * request still has time. The driver retries the find, not a getMore: a cursor lost between
 * batches (CursorNotFound during a failover, say) or a broken connection is read from the start.
 */
export function readRetried<T> (db: Db, signal: AbortSignal, read: () => Promise<T>): Promise<T> {
  return read().catch((error: unknown) => {
    if (signal.aborted || db.client.options.retryReads === false || !isRetryableRead(error)) throw error
    return read()
  })
}

/** The page through the driver's FindCursor with `raw`, which fetches every batch. */
async function cursorPage (
  db: Db, collection: string, { filter, sort, projection, skip, limit, collation }: PageQuery,
  { maxTimeMS, signal, session, readConcern, readPreference = db.readPreference }: PageOptions
): Promise<Page> {
  const options = {
    projection,
    sort,
    skip,
    limit,
    raw: true,
    maxTimeMS,
    signal,
    readPreference,
    ...(collation === undefined ? {} : { collation }),
    ...(session === undefined ? {} : { session }),
    ...(readConcern === undefined ? {} : { readConcern })
  }
  const docs = await readRetried(db, signal, () => db.collection(collection).find(filter, options).toArray())
  return pageOf(docs as unknown as Buffer[])
}

/**
 * The page's documents as raw BSON. When the server keeps the cursor open (a first batch cut
 * short by its 16 MiB reply limit), the cursor is killed and the page read again through the
 * driver's cursor, which fetches the rest (getMore must come from the session that opened it).
 */
export async function findPage (db: Db, collection: string, query: PageQuery, options: PageOptions): Promise<Page> {
  if (decodedReplies.has(db.client)) return await cursorPage(db, collection, query, options)
  const { maxTimeMS, signal, session, readConcern, readPreference = db.readPreference } = options
  const sessionOption = session === undefined ? {} : { session }
  const reply = await commandRetried(
    db, findCommand(db, collection, query, maxTimeMS, readConcern), { readPreference, signal, ...sessionOption }
  )
  const cursor: unknown = reply.cursor
  if (!Buffer.isBuffer(cursor)) {
    checkDecoded(cursor)
    decodedReplies.add(db.client)
    kill(db, collection, decodedId(cursor), readPreference)
    return await cursorPage(db, collection, query, options)
  }
  const { page, id } = firstBatch(cursor)
  kill(db, collection, id, readPreference)
  // Nothing left open, or a server that keeps the cursor open although the limit was returned: the page is whole.
  if (id === 0n || page.starts.length >= query.limit) return page
  return await cursorPage(db, collection, query, options)
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
export function projectPageCommand (
  db: Db, collection: string, projectId: ObjectId, { filter, sort, projection, skip, limit, collation }: PageQuery,
  maxTimeMS: number
): Document {
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
  // The aggregate's collation is the one its $lookup pipeline runs with (manual: $lookup).
  if (collation !== undefined) command.collation = collation
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
export async function findProjectPage (
  db: Db, collection: string, projectId: ObjectId, query: PageQuery, options: PageOptions
): Promise<{ exists: boolean, page: Page }> {
  const readPreference = db.readPreference
  const command = projectPageCommand(db, collection, projectId, query, options.maxTimeMS)
  let page: Page
  try {
    if (decodedReplies.has(db.client)) return projectOf(await aggregatePage(db, command, options.signal))
    const cursor: unknown = (await commandRetried(db, command, { readPreference, signal: options.signal })).cursor
    if (!Buffer.isBuffer(cursor)) {
      checkDecoded(cursor)
      decodedReplies.add(db.client)
      kill(db, 'projects', decodedId(cursor), readPreference)
      return projectOf(await aggregatePage(db, command, options.signal))
    }
    const batch = firstBatch(cursor)
    kill(db, 'projects', batch.id, readPreference)
    if (batch.id !== 0n) return await apart(db, collection, projectId, query, options)
    page = batch.page
  } catch (error) {
    if (!TOO_LARGE.has((error as { code?: number }).code ?? 0)) throw error
    return await apart(db, collection, projectId, query, options)
  }
  return projectOf(page)
}

/** The aggregate's `{_id, page}` documents: none when the project does not exist. */
function projectOf (page: Page): { exists: boolean, page: Page } {
  return { exists: page.starts.length > 0, page: innerPage(page, 'page') }
}

/** The project's aggregate through the driver's AggregationCursor with `raw`, which fetches every batch. */
async function aggregatePage (
  db: Db, { pipeline, cursor, maxTimeMS, readConcern, collation }: Document, signal: AbortSignal
): Promise<Page> {
  const options = {
    raw: true,
    batchSize: cursor.batchSize as number,
    maxTimeMS: maxTimeMS as number,
    signal,
    readPreference: db.readPreference,
    ...(collation === undefined ? {} : { collation: collation as CollationOptions }),
    ...(readConcern === undefined ? {} : { readConcern: readConcern as ReadConcernLike })
  }
  const docs = await readRetried(db, signal, () =>
    db.collection('projects').aggregate(pipeline as Document[], options).toArray())
  return pageOf(docs as unknown as Buffer[])
}

async function apart (
  db: Db, collection: string, projectId: ObjectId, query: PageQuery, options: PageOptions
): Promise<{ exists: boolean, page: Page }> {
  const [project, page] = await Promise.all([
    db.collection('projects').findOne(
      { _id: projectId }, { projection: { _id: 1 }, maxTimeMS: options.maxTimeMS, signal: options.signal }
    ),
    findPage(db, collection, query, options)
  ])
  return { exists: project !== null, page }
}
