// Steps confirming that nothing happened after a point share a read, and never one that began
// before they arrived (it could miss a change committed just before them).
import t from 'tap'
import { JOIN_MS, QuietReads } from '../../changes/quiet-reads.js'
import type { Gathered, StreamPoint } from '../../changes/recent-changes.js'
import { settle } from '../helpers/until.js'

const pointAt = (data: string): StreamPoint => ({ resumeToken: { _data: data } })

/** Reads the test answers itself: each started read waits for `answer`; each wait for JOIN_MS, for `pass`. */
function scriptedReads () {
  const started: Array<{ point: StreamPoint, answer: (found: Gathered) => void, fail: (error: Error) => void }> = []
  const waits: Array<{ ms: number, pass: () => void, signal: AbortSignal }> = []
  const wait = async (ms: number, signal: AbortSignal): Promise<void> => {
    await new Promise<void>((resolve) => {
      waits.push({ ms, pass: resolve, signal })
      signal.addEventListener('abort', () => { resolve() }, { once: true })
    })
  }
  const reads = new QuietReads(async (point) => await new Promise<Gathered>((resolve, reject) => {
    started.push({ point, answer: resolve, fail: reject })
  }), wait)
  return { reads, started, waits }
}

const quiet = (point: StreamPoint): Gathered => ({ lost: false, ids: [], point, committedAt: [] })

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
  t.same((await Promise.all(first)).map((found) => found?.point), Array(100).fill(moved),
    'each of the first answers from its point, its token moved to where the read reached')
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

t.test('a change found, any project\'s, leaves each step to read for itself; ' +
  'an error is each step\'s; points do not share', async (t) => {
  const { reads, started } = scriptedReads()
  const a = reads.confirm(pointAt('A'), new AbortController().signal)
  const b = reads.confirm(pointAt('B'), new AbortController().signal)
  await settle()
  t.equal(started.length, 2, 'two points, two reads')
  started[0]?.answer({ lost: false, ids: ['x'], point: pointAt('A3'), committedAt: [1] })
  t.equal(await a, undefined, 'something happened: no shared answer')
  started[1]?.fail(new Error('down'))
  await t.rejects(b, { message: 'down' })
  const lost = reads.confirm(pointAt('C'), new AbortController().signal)
  await settle()
  started[2]?.answer({ lost: true })
  t.equal(await lost, undefined, 'history lost: the step reads for itself and finds it so')
  const passed = reads.confirm({ resumeToken: { _data: 'D' }, after: 'd0', seq: 7 }, new AbortController().signal)
  await settle()
  started[3]?.answer({ lost: false, ids: [], point: { resumeToken: { _data: 'D1' }, after: 'd1' }, committedAt: [] })
  t.equal(await passed, undefined, 'a change without a document moved the point: the step reads for itself')
  const kept = reads.confirm({ resumeToken: { _data: 'E' }, after: 'e0', seq: 7 }, new AbortController().signal)
  await settle()
  started[4]?.answer({ lost: false, ids: [], point: { resumeToken: { _data: 'E1' }, after: 'e0' }, committedAt: [] })
  t.same(await kept, {
    lost: false, ids: [], point: { resumeToken: { _data: 'E1' }, after: 'e0', seq: 7 }, committedAt: []
  }, 'nothing read: its own point, the token moved on')
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
