// The examples the list interface was first specified with,
// verbatim in shape, with real values in place of the placeholders.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { Activity, Place, Registration, Session } from '../../schemas/kinds.js'
import { ID, compileFor } from '../helpers/list-query.js'

const compiled = (schema: Parameters<typeof compileFor>[0], query: string) => {
  const result = compileFor(schema, query)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.query
}
const q = (text: string) => text.replace(/filter=(.*?)(&|$)/, (_m, json: string, end: string) =>
  `filter=${encodeURIComponent(json)}${end}`)

t.test('Reference equality: filter={"category":"<object_id>"}', async (t) => {
  t.same(compiled(Activity, q(`filter={"category":"${ID}"}`)).filter, { category: { $eq: new ObjectId(ID) } })
})

t.test('Operator form: filter={"<field>":{"$gte":<number>}}', async (t) => {
  t.same(compiled(Place, q('filter={"maxNumberOfParticipants":{"$gte":20}}')).filter,
    { maxNumberOfParticipants: { $gte: 20 } })
})

t.test('Regex with options: filter={"<field>":{"$regex":"<pattern>","$options":"i"}}', async (t) => {
  t.same(compiled(Session, q('filter={"name":{"$regex":"yoga","$options":"i"}}')).filter,
    { name: { $regex: 'yoga', $options: 'i' } })
})

t.test('Several conditions: filter={"<bool_field>":true,"<field>":{"$regex":"<pattern>"}}', async (t) => {
  t.same(compiled(Activity, q('filter={"active":true,"name":{"$regex":"^Yo"}}')).filter,
    { active: { $eq: true }, name: { $regex: '^Yo' } })
})

t.test('Range on two date fields: filter={"start":{"$gte":"<date>"},"end":{"$lt":"<date>"}}', async (t) => {
  t.same(compiled(Session, q('filter={"start":{"$gte":"2024-06-01"},"end":{"$lt":"2024-07-01"}}')).filter, {
    start: { $gte: new Date('2024-06-01T00:00:00.000Z') },
    end: { $lt: new Date('2024-07-01T00:00:00.000Z') }
  })
})

t.test('Combination: filter[<field>][$in]=<value>,<value> ' +
  'with sort=+<field>,-<field>&limit=<n>&skip=<n>', async (t) => {
  t.same(compiled(Activity, 'filter[tags][$in]=music,dance&sort=+name,-createdAt&limit=10&skip=20'), {
    filter: { tags: { $in: ['music', 'dance'] } },
    sort: { name: 1, createdAt: -1, _id: 1 },
    skip: 20,
    limit: 10,
    count: false
  })
})

t.test('Field names of the spec table are filterable where they belong', async (t) => {
  for (const [schema, field, value] of [
    [Registration, 'role', '"volunteer"'], [Registration, 'user', `"${ID}"`], [Registration, 'steward', `"${ID}"`],
    [Registration, 'sessionsSubscriptions.session', `"${ID}"`], [Registration, 'createdAt', '"2024"'],
    [Session, 'activity', `"${ID}"`], [Session, 'start', '"2024-06-14"'], [Session, 'end', '"2024-06-14T18:00:00Z"'],
    [Activity, 'email', '"a@example.org"'], [Activity, 'customFields.level', '"beginner"'], [Place, 'name', '"Garden"']
  ] as const) {
    t.ok(compileFor(schema, q(`filter={"${field}":${value}}`)).ok, `${schema.$id}.${field}`)
  }
})

t.test('Paths such as category.name or user.email are invalid', async (t) => {
  t.match(compileFor(Activity, q('filter={"category.name":"Music"}')),
    { ok: false, problems: [{ code: 'RELATED_PATH' }] })
  t.match(compileFor(Registration, q('filter={"user.email":"a@example.org"}')),
    { ok: false, problems: [{ code: 'RELATED_PATH' }] })
})

t.test('Blocked operators: $where, $near, $geoWithin, $geoIntersects', async (t) => {
  for (const op of ['$where', '$near', '$geoWithin', '$geoIntersects']) {
    t.match(compileFor(Session, q(`filter={"${op}":1}`)),
      { ok: false, problems: [{ code: 'BLOCKED_OPERATOR', pointer: `/${op}` }] }, `${op} at the top`)
    t.match(compileFor(Session, q(`filter={"start":{"${op}":1}}`)),
      { ok: false, problems: [{ code: 'BLOCKED_OPERATOR', pointer: `/start/${op}` }] }, `${op} on a field`)
  }
})

t.test('Limits: 500-character patterns, 100-element arrays', async (t) => {
  t.ok(compileFor(Session, q(`filter={"name":{"$regex":"${'a'.repeat(500)}"}}`)).ok)
  t.match(compileFor(Session, q(`filter={"name":{"$regex":"${'a'.repeat(501)}"}}`)),
    { ok: false, problems: [{ code: 'REGEX_TOO_LONG' }] })
  t.ok(compileFor(Session, q(`filter={"name":{"$in":${JSON.stringify(Array(100).fill('x'))}}}`)).ok)
  t.match(compileFor(Session, q(`filter={"name":{"$in":${JSON.stringify(Array(101).fill('x'))}}}`)),
    { ok: false, problems: [{ code: 'ARRAY_TOO_LARGE' }] })
})

t.test('Date forms: full timestamp, date only, year only', async (t) => {
  for (const date of ['2024-06-14T09:30:00.000Z', '2024-06-14', '2024']) {
    t.ok(compileFor(Session, q(`filter={"start":{"$gte":"${date}"}}`)).ok, date)
  }
})
