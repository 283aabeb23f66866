// `$elemMatch` end to end on the demo data: every answer equals what the question means, computed
// here from the whole list, and one subscription's two conditions differ from two top-level keys.
// On the stand-in here; on real MongoDB with MONGODB_URI.
import t from 'tap'
import { buildWithDemoData, list, projectIds, q } from '../../helpers/demo-app.js'

const fastify = await buildWithDemoData(t)
const [project] = (await projectIds(fastify)).publicIds as [string]
const base = `/projects/${project}`

interface Subscription { session: string, subscribedAt: string }
const ids = (page: { data: Array<Record<string, unknown>> }): string[] => page.data.map((d) => d._id as string).sort()
const all = async (collection: string): Promise<Array<Record<string, unknown>>> =>
  (await list(fastify, `${base}/${collection}?limit=1000`)).data

t.test('one subscription on or after a day, against two keys that two subscriptions may meet', async (t) => {
  const registrations = await all('registrations')
  const subscriptions = (r: Record<string, unknown>): Subscription[] =>
    (r.sessionsSubscriptions as Subscription[] | undefined) ?? []
  // A session, and an instant after someone subscribed to it but before they subscribed to another.
  let chosen: { session: string, day: string } | undefined
  for (const r of registrations) {
    for (const s of subscriptions(r)) {
      const other = subscriptions(r).find((o) => o.session !== s.session && o.subscribedAt > s.subscribedAt)
      if (chosen === undefined && other !== undefined) chosen = { session: s.session, day: other.subscribedAt }
    }
  }
  if (chosen === undefined) throw new Error('the demo data has no such registration')
  const { session, day } = chosen
  const one = registrations.filter((r) => subscriptions(r).some((s) => s.session === session && s.subscribedAt >= day))
    .map((r) => r._id as string).sort()
  const two = registrations.filter((r) => subscriptions(r).some((s) => s.session === session) &&
    subscriptions(r).some((s) => s.subscribedAt >= day)).map((r) => r._id as string).sort()
  t.ok(two.length > one.length, `the two questions differ on this data (${one.length} and ${two.length})`)
  const json = await list(fastify, `${base}/registrations?limit=1000&` +
    `${q({ sessionsSubscriptions: { $elemMatch: { session, subscribedAt: { $gte: day } } } })}`)
  t.same(ids(json), one, '$elemMatch: one subscription meets both')
  const brackets = await list(fastify, `${base}/registrations?limit=1000` +
    `&filter[sessionsSubscriptions][$elemMatch][session]=${session}` +
    `&filter[sessionsSubscriptions][$elemMatch][subscribedAt][$gte]=${day}`)
  t.same(ids(brackets), one, 'the same in brackets')
  const keys = await list(fastify, `${base}/registrations?limit=1000&` +
    `${q({ 'sessionsSubscriptions.session': session, 'sessionsSubscriptions.subscribedAt': { $gte: day } })}`)
  t.same(ids(keys), two, 'two keys: any subscriptions, maybe two different ones')
  const counted = await list(fastify, `${base}/registrations?limit=0&count=true&` +
    `${q({ sessionsSubscriptions: { $elemMatch: { session, subscribedAt: { $gte: day } } } })}`)
  t.equal(counted.total, one.length, 'count=true counts the same')
})

t.test('one tag within bounds, or matching either of two conditions', async (t) => {
  const activities = await all('activities')
  const tags = (a: Record<string, unknown>): string[] => (a.tags as string[] | undefined) ?? []
  const expect = (test: (tag: string) => boolean): string[] =>
    activities.filter((a) => tags(a).some(test)).map((a) => a._id as string).sort()
  const asked = async (filter: unknown): Promise<string[]> =>
    ids(await list(fastify, `${base}/activities?limit=1000&${q(filter)}`))
  const within = expect((tag) => tag >= 'm' && tag < 'o')
  t.ok(within.length > 0 && within.length < activities.length, 'some activities, not all')
  t.same(await asked({ tags: { $elemMatch: { $gte: 'm', $lt: 'o' } } }), within, 'one tag from m to o')
  t.same(await asked({ tags: { $elemMatch: { $or: [{ $regex: '^MU', $options: 'i' }, { $eq: 'yoga' }] } } }),
    expect((tag) => /^mu/i.test(tag) || tag === 'yoga'), '$or inside')
  t.same(await asked({ tags: { $elemMatch: { $regex: '^d', $ne: 'dance' } } }),
    expect((tag) => tag.startsWith('d') && tag !== 'dance'), 'a pattern and an exclusion on one tag')
})

t.test('$exists inside: every element exists, as in MongoDB; on a custom field the 400 says why', async (t) => {
  const activities = await all('activities')
  const tagged = activities.filter((a) => Array.isArray(a.tags) && a.tags.length > 0).map((a) => a._id as string).sort()
  t.ok(tagged.length > 0 && tagged.length < activities.length, 'some activities have a tag, not all')
  t.same(ids(await list(fastify, `${base}/activities?limit=1000&${q({ tags: { $elemMatch: { $exists: true } } })}`)),
    tagged, 'true: one tag at least')
  t.same(ids(await list(fastify, `${base}/activities?limit=1000&filter[tags][$elemMatch][$exists]=true`)), tagged,
    'the same in brackets')
  t.same(ids(await list(fastify, `${base}/activities?limit=1000&${q({ tags: { $elemMatch: { $exists: false } } })}`)),
    [], 'false: none')
  const refused = await fastify.inject(`${base}/registrations?` +
    `${q({ 'customFields.ticket': { $elemMatch: { $eq: 'day' } } })}`)
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { code: 'OPERATOR_NOT_ALLOWED', errors: [{ pointer: '/customFields.ticket/$elemMatch' }] })
  t.equal(refused.json().detail, "'$elemMatch' applies to array fields only; 'customFields.ticket' is a custom field")
})
