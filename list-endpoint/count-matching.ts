// How many documents a filter matches, counted as Collection#countDocuments counts them (an
// aggregate: $match, then $group with $sum: 1) but sent as one command through Db#command, with
// no AggregationCursor to make, read and close (docs/performance.md, the driver's-share table).
// Nothing in the cursor protocol promises that the group comes in the first batch: should that
// batch come empty with the cursor left open, countDocuments counts again and reads on.
import { Long, type CollationOptions, type Db, type Document } from 'mongodb'
import { MalformedBson } from './bson-elements.js'
import { checkDecoded, decodedId, kill, readRetried } from './find-page.js'

export interface CountOptions {
  maxTimeMS: number
  signal: AbortSignal
  /** The service's collation (database/collation.ts); none for binary order. */
  collation?: CollationOptions
}

/**
 * The `aggregate` command countDocuments sends (collection.js, operations/aggregate.js), with the
 * database's read concern.
 */
export function countCommand (
  db: Db, collection: string, where: Document, { maxTimeMS, collation }: Omit<CountOptions, 'signal'>
): Document {
  const command: Document = {
    aggregate: collection, pipeline: [{ $match: where }, { $group: { _id: 1, n: { $sum: 1 } } }], cursor: {}, maxTimeMS
  }
  if (collation !== undefined) command.collation = collation
  if (db.readConcern !== undefined) command.readConcern = db.readConcern
  return command
}

/** The number of documents of `collection` that `where` matches. */
export async function countMatching (
  db: Db, collection: string, where: Document, options: CountOptions
): Promise<number> {
  const { signal, maxTimeMS, collation } = options
  const readPreference = db.readPreference
  const reply = await readRetried(db, signal, () =>
    db.command(countCommand(db, collection, where, options), { readPreference, signal }))
  const cursor: unknown = reply.cursor
  const id = decodedId(cursor)
  kill(db, collection, id, readPreference)
  // A reply without its cursor, or a group without its number, came damaged: never a count of 0.
  checkDecoded(cursor)
  const first: unknown = cursor.firstBatch[0]
  if (first === undefined) {
    // No group: nothing matched. An empty first batch of a cursor left open: the driver's cursor reads on.
    if (id === 0n) return 0
    return await db.collection(collection).countDocuments(where, {
      maxTimeMS, signal, readPreference, ...(collation === undefined ? {} : { collation })
    })
  }
  const n = (first as { n?: unknown } | null)?.n
  if (typeof n === 'number') return n
  if (n instanceof Long) return n.toNumber()
  throw new MalformedBson('the count\'s group holds no number')
}
