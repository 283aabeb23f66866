// A stream read of its own, without a database: a scripted change stream answers batch by batch.
// Caught up is the stream's postBatchResumeToken reaching the cluster time the read began at,
// whether its batches come empty (a quiet collection) or never do (a busy one).
import { ObjectId, Timestamp, type Document } from 'mongodb'
import t from 'tap'
import { RecentChanges, type Gathered, type StreamPoint } from '../../changes/recent-changes.js'
import { readFrom, type ReadRecord, type StreamSource } from '../../changes/stream-read.js'

const TARGET = 100
/** A resume token at cluster time (100, i), `tail` naming an event; a high-water mark without. */
const tokenAt = (i: number, tail = ''): Document => ({
  _data: `82${(TARGET).toString(16).padStart(8, '0')}${i.toString(16).padStart(8, '0')}${tail}`
})
const quiet = new ObjectId()
const busy = new ObjectId()
/** An insert into project `busy` at (100, i). */
const insertAt = (i: number): Document => ({
  _id: tokenAt(i, `e${i}`),
  operationType: 'insert',
  clusterTime: new Timestamp({ t: TARGET, i }),
  documentKey: { _id: new ObjectId() },
  fullDocument: { project: busy }
})

/** Batches in order: each its events and the postBatchResumeToken the driver caches once they are taken. */
function scripted (
  batches: Array<{ events: Document[], postBatch: Document }>, operationTime: number
): { source: StreamSource, closed: () => boolean } {
  let closed = false
  let buffer: Document[] = []
  let resumeToken: Document | undefined
  let post: Document | undefined
  const stream = {
    tryNext: async (): Promise<Document | null> => {
      if (buffer.length === 0) {
        const batch = batches.shift()
        if (batch === undefined) throw new Error('the script ran out of batches')
        buffer = [...batch.events]
        post = batch.postBatch
        if (buffer.length === 0) { resumeToken = post; return null }
      }
      const event = buffer.shift() as Document
      resumeToken = buffer.length === 0 ? post : event._id as Document
      return event
    },
    bufferedCount: () => buffer.length,
    get resumeToken () { return resumeToken },
    // Its tokens move inside tryNext() here, so it announces none (catch-up.test.ts's streams do).
    once: () => stream,
    close: async () => { closed = true }
  }
  const session = { operationTime: new Timestamp({ t: TARGET, i: operationTime }), endSession: async () => {} }
  const source = {
    collection: () => ({ watch: () => stream }),
    client: () => ({ startSession: () => session }),
    maxTimeMS: 1000,
    scoped: true
  } as unknown as StreamSource
  return { source, closed: () => closed }
}

const read = async (source: StreamSource, project: ObjectId): Promise<Gathered> =>
  await readFrom(source, new RecentChanges(10), { resumeToken: tokenAt(1) }, project.toHexString(), 10, () => true,
    AbortSignal.timeout(5000))

t.test('a busy collection: batches never empty, ' +
  'and the read has caught up once a batch ends past its start', async (t) => {
  // Another project's inserts, a batch after a batch; the read began at (100, 5).
  const { source, closed } = scripted([
    { events: [insertAt(2), insertAt(3)], postBatch: tokenAt(3, 'e3') },
    { events: [insertAt(4)], postBatch: tokenAt(5) },
    { events: [insertAt(6)], postBatch: tokenAt(6) }
  ], 5)
  const found = await read(source, quiet)
  t.match(found, { lost: false, ids: [] }, 'nothing of the quiet project')
  t.same((found as { point: { resumeToken: Document } }).point.resumeToken, tokenAt(5),
    'and it stands at the batch\'s high-water mark, the start reached')
  t.ok(closed(), 'its stream closed')
})

t.test('a batch ending on an event\'s own token at the start time has not caught up: ' +
  'more may share that time', async (t) => {
  const { source } = scripted([
    { events: [insertAt(5)], postBatch: tokenAt(5, 'e5') },
    { events: [], postBatch: tokenAt(5) }
  ], 5)
  t.match(await read(source, quiet), { lost: false, ids: [], point: { resumeToken: tokenAt(5) } },
    'it read on to the empty batch that stands at the start')
})

t.test('the quiet project\'s own change is found among the others', async (t) => {
  const own: Document = { ...insertAt(4), fullDocument: { project: quiet } }
  const { source } = scripted([
    { events: [insertAt(2), own], postBatch: tokenAt(6) }
  ], 5)
  t.same((await read(source, quiet) as { ids: unknown[] }).ids, [(own.documentKey as Document)._id])
})

t.test('a read that goes on after a batch of changes tells, once, what that batch held', async (t) => {
  const first = insertAt(2)
  const { source } = scripted([
    { events: [first], postBatch: first._id as Document },
    { events: [insertAt(3)], postBatch: tokenAt(4) },
    { events: [], postBatch: tokenAt(6) }
  ], 5)
  const told: Array<{ point: StreamPoint, changes: unknown[] }> = []
  const record: ReadRecord = {
    changes: [],
    caughtUp: false,
    firstBatch: (point, changes) => { told.push({ point, changes: changes.map((change) => change.id) }) }
  }
  await readFrom(source, new RecentChanges(10), { resumeToken: tokenAt(1) }, undefined, 10, () => true,
    AbortSignal.timeout(5000), Infinity, record)
  t.same(told, [{
    point: { resumeToken: first._id, after: (first._id as Document)._data },
    changes: [(first.documentKey as Document)._id]
  }], 'after the first batch, not caught up: its change, and the point after it')
  t.equal(record.changes.length, 2, 'the read went on')
  t.ok(record.caughtUp, 'to the time it began at')
})
