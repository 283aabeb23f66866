import t from 'tap'
import { generateDemoData, PER_PROJECT } from '../../demo-data/generate.js'

const data = generateDemoData()

t.test('the same data on every run', async (t) => {
  t.same(generateDemoData(), data)
})

t.test('three projects, two public', async (t) => {
  t.equal(data.projects.length, 3)
  t.equal(data.projects.filter((p) => p.public === true).length, 2)
})

t.test('each project has the documented counts', async (t) => {
  for (const project of data.projects) {
    for (const [kind, count] of Object.entries(PER_PROJECT)) {
      const docs = data[kind as keyof typeof PER_PROJECT].filter((d) => d.project.equals(project._id))
      t.equal(docs.length, count, `${kind} of ${project.name}`)
    }
  }
})

t.test('references point at documents of the same project', async (t) => {
  const ids = (kind: keyof typeof data) =>
    new Map(data[kind].map((d) => [d._id.toHexString(), d.project?.toHexString()]))
  const activities = ids('activities')
  const categories = ids('categories')
  const sessions = ids('sessions')
  const stewards = ids('stewards')
  const places = ids('places')
  const sameProject = (map: Map<string, string>, ref: { toHexString: () => string }, project: string) =>
    map.get(ref.toHexString()) === project
  t.ok(data.activities.every((a) => sameProject(categories, a.category, a.project.toHexString())), 'activity.category')
  t.ok(data.sessions.every((s) => sameProject(activities, s.activity, s.project.toHexString())), 'session.activity')
  t.ok(data.sessions.every((s) => s.places.every((p: never) => sameProject(places, p, s.project.toHexString()))),
    'session.places')
  t.ok(data.sessions.every((s) => s.stewards.every((p: never) => sameProject(stewards, p, s.project.toHexString()))),
    'session.stewards')
  t.ok(data.registrations.every((r) => r.sessionsSubscriptions.every((s: { session: never }) =>
    sameProject(sessions, s.session, r.project.toHexString()))), 'registration.sessionsSubscriptions.session')
  t.ok(data.registrations.filter((r) => r.steward)
    .every((r) => sameProject(stewards, r.steward, r.project.toHexString())), 'registration.steward')
})

t.test('optional fields are sometimes missing, as in real data', async (t) => {
  const missing = (kind: keyof typeof data, field: string) => data[kind].filter((d) => !(field in d)).length
  t.ok(missing('activities', 'description') > 0)
  t.ok(missing('places', 'maxNumberOfParticipants') > 0)
  t.ok(missing('sessions', 'name') > 0)
  t.ok(missing('registrations', 'steward') > 0)
  t.ok(missing('activities', 'updatedAt') > 0)
})

t.test('sessions end after they start, and `_id` order follows createdAt', async (t) => {
  t.ok(data.sessions.every((s) => s.end > s.start))
  for (const kind of ['activities', 'registrations'] as const) {
    const docs = data[kind]
    t.ok(docs.every((d, i) => i === 0 || d.project !== docs[i - 1]?.project ||
      d._id.toHexString() > (docs[i - 1]?._id.toHexString() ?? '')), kind)
  }
})

t.test('scale multiplies the per-project counts (for benchmarks)', async (t) => {
  t.equal(generateDemoData({ scale: 2 }).sessions.length, 3 * PER_PROJECT.sessions * 2)
})
