// The shared stream and the reads of its own, on scripted streams (no database): what MongoDB is
// allowed to answer through mongos (empty batches while idle shards hold events), an event no
// stream can read, and event types that servers add.
import { EventEmitter } from 'node:events'
import { mock } from 'node:test'
import type { FastifyBaseLogger } from 'fastify'
import { ObjectId, Timestamp, type Collection, type Document, type MongoClient } from 'mongodb'
import t, { type Test } from 'tap'
import { ChangeHub, type HubOptions } from '../../changes/change-hub.js'
import { settle } from '../helpers/until.js'

/** A resume token at cluster time (t, i), as mongod writes them: 0x82, the time, then the rest. */
const token = (seconds: number, increment: number, rest = '01'): Document =>
  ({
    _data: `82${seconds.toString(16).padStart(8, '0')}${increment.toString(16).padStart(8, '0')}${rest}`.toUpperCase()
  })
const highWaterMark = (seconds: number, increment = 0): Document => token(seconds, increment, '')
const project = new ObjectId()
const insert = (seconds: number, id = new ObjectId()): Document => ({
  _id: token(seconds, 1),
  operationType: 'insert',
  documentKey: { _id: id },
  clusterTime: new Timestamp({ t: seconds, i: 1 }),
  fullDocument: { project }
})

interface Batch { events: Document[], postBatchResumeToken: Document }

/**
 * A change stream that answers `batches` in turn, as the driver's ChangeStream does: the first
 * tryNext sends the opening aggregate (`onFirst`), and after an empty first batch, announced with
 * its token, a getMore a turn later. Then it fails with `endWith` when given, else answers empty
 * batches at the last token (each a turn of the event loop later, as a getMore would be).
 */
function scriptedStream (batches: Batch[], onFirst: () => void, failWith?: unknown, endWith?: unknown) {
  let buffer: Document[] = []
  let last: Batch | undefined
  let first = true
  let getMores = 0
  const events = new EventEmitter()
  const moved = (token: Document): void => {
    stream.resumeToken = token
    events.emit('resumeTokenChanged', token)
  }
  const getMore = async (): Promise<Batch> => {
    await new Promise((resolve) => setImmediate(resolve))
    if (batches.length === 0 && endWith !== undefined) throw endWith
    getMores++
    return batches.shift() ?? { events: [], postBatchResumeToken: stream.resumeToken ?? highWaterMark(1) }
  }
  const stream = {
    resumeToken: null as Document | null,
    closed: false,
    get getMores () { return getMores },
    bufferedCount: () => buffer.length,
    on: (name: string, listener: (token: Document) => void) => { events.on(name, listener); return stream },
    once: (name: string, listener: (token: Document) => void) => { events.once(name, listener); return stream },
    tryNext: async (): Promise<Document | null> => {
      if (failWith !== undefined) throw failWith
      if (buffer.length === 0) {
        let batch: Batch
        if (first) {
          first = false
          // The aggregate's round trip.
          await new Promise((resolve) => setImmediate(resolve))
          onFirst()
          batch = batches.shift() ?? { events: [], postBatchResumeToken: highWaterMark(1) }
          if (batch.events.length === 0) {
            moved(batch.postBatchResumeToken)
            batch = await getMore()
          }
        } else {
          batch = await getMore()
        }
        last = batch
        buffer = [...batch.events]
        if (buffer.length === 0) {
          moved(batch.postBatchResumeToken)
          return null
        }
      }
      const event = buffer.shift() as Document
      moved(buffer.length === 0 ? (last as Batch).postBatchResumeToken : event._id as Document)
      return event
    },
    close: async () => { stream.closed = true }
  }
  return stream
}

const quiet = (): void => {}
const silent = { warn: quiet, info: quiet, error: quiet, debug: quiet } as unknown as FastifyBaseLogger

/** Turns enough for the fakes' getMores (setImmediate) and what they set off to run. */
const TURNS = 5
/** Fake timers for one test, given back when it ends (a hook on the root would reach other files' tests in a group). */
function fakeTimers (t: Test): void {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 })
  t.teardown(() => { mock.timers.reset() })
}

/** A hub whose streams are made by `watch`, and whose sessions were answered at `operationTime`. */
function hubOf (
  watch: (options: Document, session: { operationTime?: Timestamp }) => unknown, operationTime: Timestamp,
  extra: Partial<HubOptions> = {}
): ChangeHub {
  const collection = {
    collectionName: 'sessions',
    watch: (_pipeline: Document[], options: Document) =>
      watch(options, options.session as { operationTime?: Timestamp })
  }
  const client = {
    startSession: () => ({
      operationTime: undefined as Timestamp | undefined, endSession: async () => {}, _time: operationTime
    })
  }
  return new ChangeHub({
    collection: () => collection as unknown as Collection<Document>,
    client: () => client as unknown as MongoClient,
    maxTimeMS: 1000,
    scoped: true,
    capacity: 100,
    log: silent,
    ...extra
  })
}

const all = (): boolean => true

t.test('through mongos, empty batches are not "caught up" until the stream reaches ' +
  'the time the read began at', async (t) => {
  const late = new ObjectId()
  const answeredAt = new Timestamp({ t: 100, i: 1 })
  let opened: Document | undefined
  const hub = hubOf((options, session) => {
    opened = options
    return scriptedStream([
      // An idle shard holds the stream back: two empty batches, behind the time of the read.
      { events: [], postBatchResumeToken: highWaterMark(90) },
      { events: [], postBatchResumeToken: highWaterMark(95) },
      { events: [insert(99, late)], postBatchResumeToken: highWaterMark(99, 2) },
      { events: [], postBatchResumeToken: highWaterMark(100, 1) }
    ], () => { session.operationTime = answeredAt })
  }, answeredAt)
  const gathered = await hub.readFrom({ resumeToken: highWaterMark(80) }, project.toHexString(), 10, all,
    new AbortController().signal)
  if (gathered.lost) throw new Error('lost')
  t.same(gathered.ids.map(String), [String(late)], 'the change committed before the read is in its answer')
  t.same(gathered.point.resumeToken, highWaterMark(100, 1), 'its point is the stream\'s postBatchResumeToken')
  t.equal(opened?.maxTimeMS, 1000, 'the opening aggregate has a time limit')
  t.ok(opened?.session !== undefined, 'the stream is read in a session of its own')
})

t.test('a read that cannot catch up before its request ends says so, never "nothing happened"', async (t) => {
  fakeTimers(t)
  const answeredAt = new Timestamp({ t: 100, i: 1 })
  let emptyBatches = 0
  const hub = hubOf((_options, session) => {
    const stream = scriptedStream([], () => { session.operationTime = answeredAt })
    const tryNext = stream.tryNext
    stream.tryNext = async () => {
      const event = await tryNext()
      if (event === null) emptyBatches++
      return event
    }
    return stream
  }, answeredAt)
  const controller = new AbortController()
  const reading = hub.readFrom({ resumeToken: highWaterMark(80) }, project.toHexString(), 10, all, controller.signal)
  let settled = false
  reading.then(() => { settled = true }, () => { settled = true })
  // Empty batches at an old time until the request's budget ends: after each, the read pauses
  // (a timer, moved here by hand), then asks again, and does not answer.
  for (let batches = 1; batches <= 4; batches++) {
    await settle(TURNS)
    t.equal(emptyBatches, batches, `empty batch ${batches}, then a pause before the next getMore`)
    mock.timers.runAll()
  }
  t.notOk(settled, 'and the read has not answered')
  controller.abort(new DOMException('budget spent', 'TimeoutError'))
  await t.rejects(reading, { name: 'TimeoutError' })
})

t.test('an opening batch empty at the time the read began is caught up at once, without a getMore', async (t) => {
  const answeredAt = new Timestamp({ t: 100, i: 1 })
  let stream: ReturnType<typeof scriptedStream> | undefined
  const hub = hubOf((_options, session) => {
    stream = scriptedStream([{ events: [], postBatchResumeToken: highWaterMark(100, 1) }],
      () => { session.operationTime = answeredAt })
    return stream
  }, answeredAt)
  const gathered = await hub.readFrom({ resumeToken: highWaterMark(80) }, project.toHexString(), 10, all,
    new AbortController().signal)
  t.same(gathered.lost ? 'lost' : gathered.ids, [], 'no change, and it is current')
  t.same(gathered.lost ? 'lost' : gathered.point.resumeToken, highWaterMark(100, 1), 'at the opening batch\'s token')
  t.equal(stream?.getMores, 0, 'one round trip: the getMore the driver sends after it is not awaited')
})

t.test('an opening batch of one event whose token reaches the read\'s time: ' +
  'that event is read, not passed over', async (t) => {
  const answeredAt = new Timestamp({ t: 100, i: 1 })
  const id = new ObjectId()
  const opening = { events: [insert(100, id)], postBatchResumeToken: highWaterMark(100, 1) }
  const hub = hubOf((_options, session) => scriptedStream([opening], () => { session.operationTime = answeredAt }),
    answeredAt)
  const gathered = await hub.readFrom({ resumeToken: highWaterMark(80) }, project.toHexString(), 10, all,
    new AbortController().signal)
  t.same(gathered.lost ? 'lost' : gathered.ids.map(String), [String(id)], 'the change is in the answer')
})

t.test('a shared stream opening on one event is ready with that event among its changes', async (t) => {
  const id = new ObjectId()
  const opening = { events: [insert(70, id)], postBatchResumeToken: highWaterMark(70, 1) }
  const hub = hubOf(() => scriptedStream([opening], quiet), new Timestamp({ t: 70, i: 1 }))
  t.teardown(async () => await hub.stop())
  await hub.ready()
  t.equal(hub.position().seq, 1, 'its position stands after the event, not before it with a token past it')
  const gathered = hub.gather(0, project.toHexString(), 10, all)
  t.same(gathered.lost ? 'lost' : gathered.ids.map(String), [String(id)])
})

t.test('the streams read on the primary, whatever the read preference of MONGODB_URI', async (t) => {
  const options: Document[] = []
  const hub = hubOf((opened, session) => {
    options.push(opened)
    // The shared stream has no session of its own; a read of its own has one.
    return scriptedStream([{ events: [], postBatchResumeToken: highWaterMark(100, 1) }],
      () => { if (session !== undefined) session.operationTime = new Timestamp({ t: 100, i: 1 }) })
  }, new Timestamp({ t: 100, i: 1 }))
  t.teardown(async () => await hub.stop())
  await hub.ready()
  await hub.readFrom({ resumeToken: highWaterMark(80) }, project.toHexString(), 10, all, new AbortController().signal)
  t.same(options.map((opened) => opened.readPreference), ['primary', 'primary'],
    'the shared stream and a read of its own')
})

t.test('an event no stream can read: the shared stream moves past it, once, and says so', async (t) => {
  const unreadable: unknown[] = []
  const errors: string[] = []
  const log = {
    ...silent, error: (_context: unknown, message: string) => { errors.push(message) }
  } as unknown as FastifyBaseLogger
  const resumed: Array<Document | undefined> = []
  let opened = 0
  const hub = hubOf((options) => {
    opened++
    resumed.push(options.resumeAfter as Document | undefined)
    // The first stream follows; after one event, resuming meets the event over 16 MiB.
    if (opened === 1) {
      return scriptedStream([{ events: [insert(50)], postBatchResumeToken: token(50, 1) }], quiet, undefined,
        Object.assign(new Error('connection reset'), { code: 'ECONNRESET' }))
    }
    if (options.resumeAfter !== undefined) {
      return scriptedStream([], quiet, Object.assign(new Error('BSONObjectTooLarge'), { code: 10334 }))
    }
    return scriptedStream([{ events: [], postBatchResumeToken: highWaterMark(70) }], quiet)
  }, new Timestamp({ t: 70, i: 0 }), { log, onUnreadable: (error) => { unreadable.push(error) } })
  fakeTimers(t)
  t.teardown(async () => await hub.stop())
  await hub.ready()
  const before = hub.position()
  // The first stream ends (as a network error would end it), and the hub pauses before it opens
  // the next, which resumes after the event (a second: its log says it tries again every second).
  await settle(TURNS)
  t.equal(hub.isRunning, false, 'the first stream ended')
  mock.timers.tick(999)
  await settle(TURNS)
  t.equal(opened, 1, 'no stream opened again before the pause is over')
  mock.timers.tick(1)
  await settle(TURNS)
  t.equal(opened, 3, 'after the pause: the stream that resumes, then one from now')
  t.ok(hub.isRunning, 'the stream follows again')
  t.equal(unreadable.length, 1, 'the unreadable change is counted once')
  t.equal(errors.length, 1, 'and logged once')
  t.equal(resumed[2], undefined, 'the new stream starts from now, past the change')
  t.equal(hub.locate(before), undefined,
    'points before it are no longer among the recent changes (their feeds read on their own, and meet it)')
})

t.test('an event type the feed does not know is passed over, counted, and wakes nobody', async (t) => {
  const skipped: string[] = []
  const future = {
    _id: token(60, 1), operationType: 'reshardBlockingWrites', clusterTime: new Timestamp({ t: 60, i: 1 })
  }
  const known = insert(61)
  const hub = hubOf(() => scriptedStream([{ events: [future, known], postBatchResumeToken: token(61, 1) }], quiet),
    new Timestamp({ t: 61, i: 1 }), { onSkipped: (type) => { skipped.push(type) } })
  t.teardown(async () => await hub.stop())
  // The hub is ready once it took in the first batch, both its events.
  await hub.ready()
  t.equal(hub.position().seq, 2, 'the unknown event and the known one are both in the recent changes')
  t.same(skipped, ['reshardBlockingWrites'])
  const gathered = hub.gather(0, project.toHexString(), 10, all)
  t.same(gathered.lost ? 'lost' : gathered.ids.map(String), [String((known.documentKey as Document)._id)],
    'only the known change is gathered, and nothing is lost')
})
