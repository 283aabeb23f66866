// The recent changes of a collection, without a database: which ids a feed's next answer takes
// from them, and where its token then stands.
import { ObjectId, Timestamp } from 'mongodb'
import t from 'tap'
import { readChange, type Change } from '../../changes/change-events.js'
import { RecentChanges, type StreamPoint } from '../../changes/recent-changes.js'

/** A change numbered `n`: its key orders it, as an event's `_data` does. */
const change = (n: number, id: string | undefined, projects: string[], lost = false): Change =>
  ({
    token: { _data: `k${n}` },
    key: `k${n}`,
    type: id === undefined ? 'unknownType' : 'insert',
    id,
    projects,
    lost,
    committedAt: 1000 + n
  })

/** Ten changes: d1…d10 in projects a and b by turns, d1 changed again, one event about no document. */
function filled (capacity = 100): RecentChanges {
  const recent = new RecentChanges(capacity)
  const ids = ['d1', 'd2', 'd3', 'd1', 'd5', undefined, 'd7', 'd8', 'd9', 'd10']
  ids.forEach((id, i) => recent.add(change(i + 1, id, id === undefined ? [] : [i % 2 === 0 ? 'a' : 'b'])))
  return recent
}

t.test('what a gathering takes, and the point it moves to', async (t) => {
  const all = (): boolean => true
  const cases: Array<{
    name: string
    from: number
    project?: string
    limit: number
    admit?: (id: unknown) => boolean
    ids: string[]
    seq: number
  }> = [
    {
      name: 'every change after the start, each document once',
      from: 0,
      limit: 100,
      ids: ['d1', 'd2', 'd3', 'd5', 'd7', 'd8', 'd9', 'd10'],
      seq: 10
    },
    { name: 'one project\'s', from: 0, project: 'a', limit: 100, ids: ['d1', 'd3', 'd5', 'd7', 'd9'], seq: 10 },
    {
      name: 'at most limit documents: the point stops before the next one',
      from: 0,
      project: 'a',
      limit: 2,
      ids: ['d1', 'd3'],
      seq: 4
    },
    {
      name: 'a document changed again does not count twice toward the limit',
      from: 0,
      limit: 3,
      ids: ['d1', 'd2', 'd3'],
      seq: 4
    },
    { name: 'from the middle', from: 6, project: 'b', limit: 100, ids: ['d8', 'd10'], seq: 10 },
    { name: 'nothing new: the newest point', from: 10, limit: 100, ids: [], seq: 10 },
    {
      name: 'documents the caller may not read are passed over',
      from: 0,
      limit: 100,
      admit: (id) => id !== 'd2',
      ids: ['d1', 'd3', 'd5', 'd7', 'd8', 'd9', 'd10'],
      seq: 10
    }
  ]
  for (const { name, from, project, limit, admit = all, ids, seq } of cases) {
    const gathered = filled().gather(from, project, limit, admit)
    t.match(gathered, { lost: false, ids, point: { seq, resumeToken: { _data: `k${seq}` } } }, name)
  }
})

t.test('ids of other BSON types with the same text are other documents', async (t) => {
  const recent = new RecentChanges(100)
  const ids = [
    new Date('2024-05-01T00:00:00Z'), '2024-05-01T00:00:00.000Z', 7, '7', new ObjectId('65cd7e3007370d3300000000'),
    '65cd7e3007370d3300000000'
  ]
  ids.forEach((id, i) => recent.add({ ...change(i + 1, 'x', ['a']), id }))
  t.match(recent.gather(0, 'a', 100, () => true), { lost: false, point: { seq: 6 } })
  t.same((recent.gather(0, 'a', 100, () => true) as { ids: unknown[] }).ids, ids,
    'six documents, none taken for another')
})

t.test('a change is routed to the projects the lists put its document in, before and after', async (t) => {
  const [a, b, c] = [
    '65cd7e3007370d3300000001', '65cd7e3007370d3300000002', '65cd7e3007370d3300000003'
  ].map((hex) => new ObjectId(hex)) as [ObjectId, ObjectId, ObjectId]
  const event = (before: unknown, after: unknown) => readChange({
    _id: { _data: 'k1' },
    operationType: 'update',
    clusterTime: new Timestamp({ t: 1, i: 1 }),
    documentKey: { _id: 'd1' },
    fullDocumentBeforeChange: { _id: 'd1', project: before },
    fullDocument: { _id: 'd1', project: after }
  }, true).projects
  t.same(event(a, b), [a.toHexString(), b.toHexString()], 'moved: both projects')
  t.same(event(a, a), [a.toHexString()], 'within one: once')
  // { project: <ObjectId> } matches an array that holds it (manual: "Query an Array").
  t.same(event([a, b], c), [a.toHexString(), b.toHexString(), c.toHexString()], 'an array of projects: each of them')
  t.same(event([a, 'x', [b]], a), [a.toHexString()],
    'an array\'s other elements are no project (a nested array is not matched either)')
  // Nor a string of a project's hex, which no list's { project: <ObjectId> } matches.
  t.same(event(a.toHexString(), undefined), [], 'a string is no project')
})

t.test('a change that lost the history is met by every feed behind it, and only by them', async (t) => {
  const recent = filled()
  recent.add(change(11, 'd11', [], true))
  t.same(recent.gather(0, 'a', 100, () => true), { lost: true }, 'behind it: lost')
  t.match(recent.gather(11, 'a', 100, () => true), { lost: false, ids: [] }, 'past it: nothing lost')
})

t.test('which points are found among the recent changes', async (t) => {
  const recent = filled(4)
  const newest = recent.position()
  t.match(newest, { seq: 10, after: 'k10', resumeToken: { _data: 'k10' } },
    'the newest point stands after the last change')
  const cases: Array<{ name: string, point: StreamPoint, seq: number | undefined }> = [
    { name: 'a point this ring issued', point: newest, seq: 10 },
    {
      name: 'a point of another replica, by its last change\'s key',
      point: { resumeToken: { _data: 'k9' }, after: 'k9', epoch: 'other', seq: 3 },
      seq: 9
    },
    // Five kept at most (capacity and a quarter), four after a drop: changes 7 to 10 remain.
    {
      name: 'a point before the oldest kept change',
      point: { resumeToken: { _data: 'k2' }, after: 'k2' },
      seq: undefined
    },
    {
      name: 'this ring\'s point just before the oldest kept change (its own change dropped)',
      point: { resumeToken: { _data: 'k6' }, after: 'k6', epoch: newest.epoch, seq: 6 },
      seq: 6
    },
    {
      name: 'this ring\'s point older than that',
      point: { resumeToken: { _data: 'k5' }, after: 'k5', epoch: newest.epoch, seq: 5 },
      seq: undefined
    },
    { name: 'a point without a last change', point: { resumeToken: { _data: 'k1' } }, seq: undefined }
  ]
  for (const { name, point, seq } of cases) t.equal(recent.locate(point), seq, name)
  t.match(recent.gather(6, undefined, 100, () => true), { ids: ['d7', 'd8', 'd9', 'd10'] },
    'the kept changes are still read from just before the oldest')
})

t.test('a point read elsewhere joins the recent changes when they hold its last change', async (t) => {
  const recent = filled()
  t.match(recent.join({ resumeToken: { _data: 'k8x' }, after: 'k8' }),
    { resumeToken: { _data: 'k8x' }, after: 'k8', seq: 8, epoch: recent.position().epoch })
  t.same(recent.join({ resumeToken: { _data: 'z' }, after: 'unknown' }),
    { resumeToken: { _data: 'z' }, after: 'unknown' }, 'else it stays as it was')
})

t.test('reset: the points issued before are found no more, by sequence or by key', async (t) => {
  const recent = filled()
  const before = recent.position()
  recent.reset()
  t.throws(() => recent.position(), 'no position until the stream answers again')
  recent.add(change(20, 'd20', ['a']))
  t.equal(recent.locate(before), undefined)
  t.not(recent.position().epoch, before.epoch, 'a new epoch')
  t.match(recent.position(), { seq: 11, after: 'k20' }, 'sequence numbers go on')
})
