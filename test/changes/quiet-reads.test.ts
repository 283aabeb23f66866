// Steps confirming that nothing happened after a point share a read, and never one that began
// before they arrived (it could miss a change committed just before them); each takes its own
// changes from that read.
import { ObjectId } from 'mongodb'
import t from 'tap'
import type { Change } from '../../changes/change-events.js'
import type { ChangeHub } from '../../changes/change-hub.js'
import {
  JOIN_MS, QuietReads, changesAfter, stepAnswer, type SharedRead, type StepWants
} from '../../changes/quiet-reads.js'
import type { StreamPoint } from '../../changes/recent-changes.js'
import { settle } from '../helpers/until.js'

const pointAt = (data: string): StreamPoint => ({ resumeToken: { _data: data } })

/** Reads the test answers itself: each started read waits for `answer`; each wait for JOIN_MS, for `pass`. */
function scriptedReads () {
  const started: Array<{ point: StreamPoint, answer: (found: SharedRead) => void, fail: (error: Error) => void }> = []
  const waits: Array<{ ms: number, pass: () => void, signal: AbortSignal }> = []
  const wait = async (ms: number, signal: AbortSignal): Promise<void> => {
    await new Promise<void>((resolve) => {
      waits.push({ ms, pass: resolve, signal })
      signal.addEventListener('abort', () => { resolve() }, { once: true })
    })
  }
  const reads = new QuietReads(async (point) => await new Promise<SharedRead>((resolve, reject) => {
    started.push({ point, answer: resolve, fail: reject })
  }), wait)
  return { reads, started, waits }
}

const quiet = (point: StreamPoint): SharedRead => ({ lost: false, point, changes: [], caughtUp: true })

t.test('a burst on one point is one read; ' +
  'a step that arrives while it runs waits for the next, which is one read too', async (t) => {
  const { reads, started } = scriptedReads()
  const point = pointAt('A')
  const first = Array.from({ length: 100 }, async () => await reads.confirm(point, new AbortController().signal))
  await settle()
  t.equal(started.length, 1, '100 steps, one read')
  const second = Array.from({ length: 50 }, async () => await reads.confirm(point, new AbortController().signal))
  await settle()
  t.equal(started.length, 1, 'the steps that came during it do not share the running read')
  const moved = pointAt('A2')
  started[0]?.answer(quiet(moved))
  t.same((await Promise.all(first)), Array(100).fill(quiet(moved)), 'each of the first has that read')
  await settle()
  t.equal(started.length, 2, 'then one read for the 50 that came during it')
  started[1]?.answer(quiet(moved))
  t.equal((await Promise.all(second)).length, 50)
  t.equal(reads.size, 0, 'nothing kept once the reads have ended')
})

t.test('while a read is slow, the steps that arrive share one begun JOIN_MS after the first of them, ' +
  'not two reads in a row', async (t) => {
  const { reads, started, waits } = scriptedReads()
  const point = pointAt('A')
  const first = reads.confirm(point, new AbortController().signal)
  await settle()
  t.equal(waits.length, 0, 'no read running: the first begins at once')
  const during = Array.from({ length: 30 }, async () => await reads.confirm(point, new AbortController().signal))
  await settle()
  t.same(waits.map((wait) => wait.ms), [JOIN_MS],
    'the steps that came during it wait for its end or JOIN_MS, one timer for all')
  t.equal(started.length, 1)
  waits[0]?.pass()
  await settle()
  t.equal(started.length, 2, 'JOIN_MS passed: their read begins, the first still running')
  const later = reads.confirm(point, new AbortController().signal)
  await settle()
  t.equal(started.length, 2, 'a step after it began waits for the next')
  started[1]?.answer(quiet(point))
  t.equal((await Promise.all(during)).length, 30, 'the 30 answered by their read')
  await settle()
  t.equal(started.length, 3, 'the next begins as that one ends')
  t.ok(waits[1]?.signal.aborted, 'and its timer is cleared')
  started[0]?.answer(quiet(point))
  started[2]?.answer(quiet(point))
  t.same(await first, quiet(point))
  t.same(await later, quiet(point))
  t.equal(reads.size, 0, 'nothing kept once the reads have ended, in whatever order')
  const again = reads.confirm(point, new AbortController().signal)
  await settle()
  t.equal(started.length, 4, 'a step after them all reads at once')
  started[3]?.answer(quiet(point))
  t.same(await again, quiet(point))
})

t.test('an error is each step\'s; points do not share', async (t) => {
  const { reads, started } = scriptedReads()
  const a = reads.confirm(pointAt('A'), new AbortController().signal)
  const b = reads.confirm(pointAt('B'), new AbortController().signal)
  await settle()
  t.equal(started.length, 2, 'two points, two reads')
  started[0]?.answer(quiet(pointAt('A1')))
  t.same(await a, quiet(pointAt('A1')))
  started[1]?.fail(new Error('down'))
  await t.rejects(b, { message: 'down' })
})

const [MINE, THEIRS] = ['aa'.repeat(12), 'bb'.repeat(12)]
let key = 0
/** A change of a document of `project`, its token and key in order. */
const changeOf = (project: string, id: unknown = new ObjectId()): Change => {
  const k = `k${String(++key).padStart(4, '0')}`
  return { token: { _data: k }, key: k, type: 'update', id, projects: [project], lost: false, committedAt: key }
}
const wants = (limit = 10): StepWants =>
  ({ project: MINE, limit, admit: (id) => id instanceof ObjectId, join: (at) => ({ ...at, seq: 99 }) })

t.test('a step takes its own project\'s changes from the shared read, as from the recent changes', async (t) => {
  const point: StreamPoint = { resumeToken: { _data: 'P' }, after: 'p0', seq: 7 }
  const end: StreamPoint = { resumeToken: { _data: 'END' }, after: 'k-last' }
  const moved = { ...point, resumeToken: { _data: 'P2' } }
  const nothing: SharedRead = { lost: false, point: moved, changes: [], caughtUp: true }
  t.same(stepAnswer(nothing, point, wants()), {
    lost: false, ids: [], point: { ...point, resumeToken: { _data: 'P2' } }, committedAt: []
  }, 'nothing read: its own point, the token moved on')
  const a = changeOf(MINE)
  const other = changeOf(THEIRS)
  const b = changeOf(MINE)
  const again = changeOf(MINE, a.id)
  const odd = changeOf(MINE, 'a-string-id')
  const read: SharedRead = { lost: false, point: end, changes: [a, other, b, again, odd], caughtUp: true }
  t.same(stepAnswer(read, point, wants()), {
    lost: false, ids: [a.id, b.id], point: end, committedAt: [a.committedAt, b.committedAt]
  }, 'its documents, each once, not another project\'s nor one it does not admit; at the read\'s end')
  t.same(stepAnswer(read, point, { ...wants(), project: undefined, admit: () => true }), {
    lost: false,
    ids: [a.id, other.id, b.id, 'a-string-id'],
    point: end,
    committedAt: [a.committedAt, other.committedAt, b.committedAt, odd.committedAt]
  }, 'every project\'s when it names none')
  t.same(stepAnswer(read, point, wants(1)), {
    lost: false, ids: [a.id], point: { resumeToken: a.token, after: a.key, seq: 99 }, committedAt: [a.committedAt]
  }, 'its limit reached: it stands after the last change it took, placed among the recent changes')
})

t.test('a step reads for itself when the shared read cannot tell', async (t) => {
  const point: StreamPoint = { resumeToken: { _data: 'P' } }
  const end: StreamPoint = { resumeToken: { _data: 'END' } }
  t.equal(stepAnswer({ lost: true }, point, wants()), undefined, 'the history lost: it reads, and finds it so')
  const lost = { ...changeOf(THEIRS), lost: true }
  t.equal(stepAnswer({ lost: false, point: end, changes: [lost], caughtUp: true }, point, wants()), undefined,
    'a change that loses the history, any project\'s')
  const other = changeOf(THEIRS)
  t.equal(stepAnswer({ lost: false, point: end, changes: [other], caughtUp: false }, point, wants()), undefined,
    'not caught up, and nothing of its own found: it cannot say "nothing"')
  const a = changeOf(MINE)
  t.same(stepAnswer({ lost: false, point: end, changes: [other, a], caughtUp: false }, point, wants()),
    { lost: false, ids: [a.id], point: end, committedAt: [a.committedAt] },
    'not caught up, with changes of its own: those, up to where the read stopped')
})

t.test('a step whose time ends first leaves with its signal\'s reason; the read goes on for the others', async (t) => {
  const { reads, started } = scriptedReads()
  const point = pointAt('A')
  const leaving = new AbortController()
  const early = reads.confirm(point, leaving.signal)
  const staying = reads.confirm(point, new AbortController().signal)
  await settle()
  leaving.abort(new Error('its budget'))
  await t.rejects(early, { message: 'its budget' })
  started[0]?.answer(quiet(point))
  t.same(await staying, quiet(point))
  await t.rejects(reads.confirm(point, AbortSignal.abort(new Error('already'))), { message: 'already' },
    'an aborted step does not wait')
  t.equal(started.length, 1, 'nor starts a read')
})

t.test('a step whose own change is in the shared read\'s first batch answers then; ' +
  'one without waits for the read to catch up', async (t) => {
  const point: StreamPoint = { resumeToken: { _data: 'P' }, seq: 3 }
  // A hub whose recent changes hold nothing after the point, and bring nothing.
  const hub = {
    locate: () => 3,
    gather: () => ({ lost: false, ids: [], point, committedAt: [] }),
    wait: () => () => {}
  } as unknown as ChangeHub
  const mine = changeOf(MINE)
  let tell = (_read: SharedRead): void => {}
  let finish = (_read: SharedRead): void => {}
  const reads = new QuietReads(async (_point, firstBatch) => {
    tell = firstBatch
    return await new Promise<SharedRead>((resolve) => { finish = resolve })
  })
  let ownDone = false
  const own = changesAfter(hub, reads, point, wants(), new AbortController().signal)
    .finally(() => { ownDone = true })
  let otherDone = false
  const other = changesAfter(hub, reads, point, { ...wants(), project: THEIRS }, new AbortController().signal)
    .finally(() => { otherDone = true })
  await settle()
  const firstPoint: StreamPoint = { resumeToken: mine.token, after: mine.key }
  tell({ lost: false, point: firstPoint, changes: [mine], caughtUp: false })
  t.same(await own, { lost: false, ids: [mine.id], point: firstPoint, committedAt: [mine.committedAt] },
    'its change, at the point after it, before the read has caught up')
  t.ok(ownDone)
  await settle()
  t.notOk(otherDone, 'another project\'s step cannot say "nothing" yet')
  const end: StreamPoint = { resumeToken: { _data: 'END' } }
  finish({ lost: false, point: end, changes: [mine], caughtUp: true })
  t.same(await other, { lost: false, ids: [], point: end, committedAt: [] }, 'it answers once the read has caught up')
})
