// `$elemMatch` as docs/query-language.md ("One element of an array") states it: what each form
// compiles to, in both notations, and every refusal with its code and pointer.
import { BSONRegExp, ObjectId } from 'mongodb'
import t, { type Test } from 'tap'
import { Activity, Registration, Session } from '../../schemas/kinds.js'
import { ID, ID2, compileFor, jsonFilter } from '../helpers/list-query.js'

const june = new Date('2024-06-01T00:00:00.000Z')
const july = new Date('2024-06-02T00:00:00.000Z')

function filterOf (t: Test, schema: typeof Activity, query: string): unknown {
  const result = compileFor(schema, query)
  t.ok(result.ok, `${query} compiles`)
  return result.ok ? result.query.filter : undefined
}

function problemsOf (schema: typeof Activity, query: string): Array<{ code: string, pointer: string }> {
  const result = compileFor(schema, query)
  return result.ok ? [] : result.problems.map(({ code, pointer }) => ({ code, pointer }))
}

t.test('on an array of documents: one element holds every condition, in both notations', async (t) => {
  const expected = {
    sessionsSubscriptions: { $elemMatch: { session: { $eq: new ObjectId(ID) }, subscribedAt: { $gte: june } } }
  }
  t.same(filterOf(t, Registration, jsonFilter({
    sessionsSubscriptions: { $elemMatch: { session: ID, subscribedAt: { $gte: '2024-06-01' } } }
  })), expected)
  t.same(filterOf(t, Registration, `filter[sessionsSubscriptions][$elemMatch][session]=${ID}` +
    '&filter[sessionsSubscriptions][$elemMatch][subscribedAt][$gte]=2024-06-01'), expected)
  // Two top-level keys stay what MongoDB makes of them: each may be met by another element.
  t.same(filterOf(t, Registration, jsonFilter({
    'sessionsSubscriptions.session': ID, 'sessionsSubscriptions.subscribedAt': { $gte: '2024-06-01' }
  })), {
    'sessionsSubscriptions.session': { $eq: new ObjectId(ID) }, 'sessionsSubscriptions.subscribedAt': { $gte: june }
  })
})

t.test('inside, element fields keep their own rules: dates as periods, $or and $and', async (t) => {
  t.same(filterOf(t, Registration, jsonFilter({
    sessionsSubscriptions: { $elemMatch: { $or: [{ session: ID }, { subscribedAt: '2024-06-01' }] } }
  })), {
    sessionsSubscriptions: {
      $elemMatch: { $or: [{ session: { $eq: new ObjectId(ID) } }, { subscribedAt: { $gte: june, $lt: july } }] }
    }
  })
  t.same(filterOf(t, Registration, `filter[sessionsSubscriptions][$elemMatch][$and][0][session][$in]=${ID},${ID2}`),
    { sessionsSubscriptions: { $elemMatch: { $and: [{ session: { $in: [new ObjectId(ID), new ObjectId(ID2)] } }] } } })
})

t.test('on an array of scalars: operators of the element type', async (t) => {
  t.same(filterOf(t, Activity, jsonFilter({ tags: { $elemMatch: { $regex: '^yo', $options: 'i' } } })),
    { tags: { $elemMatch: { $regex: '^yo', $options: 'i' } } })
  t.same(filterOf(t, Activity, 'filter[tags][$elemMatch][$regex]=^yo&filter[tags][$elemMatch][$options]=i'),
    { tags: { $elemMatch: { $regex: '^yo', $options: 'i' } } })
  t.same(filterOf(t, Activity, jsonFilter({ tags: { $elemMatch: { $gte: 'b', $lt: 'd' }, $size: 2 } })),
    { tags: { $elemMatch: { $gte: 'b', $lt: 'd' }, $size: 2 } })
  t.same(filterOf(t, Activity, 'filter[tags][$elemMatch][$in]=yoga, pilates'),
    { tags: { $elemMatch: { $in: ['yoga', 'pilates'] } } })
  t.same(filterOf(t, Session, jsonFilter({ places: { $elemMatch: { $in: [ID, ID2], $ne: ID } } })),
    { places: { $elemMatch: { $in: [new ObjectId(ID), new ObjectId(ID2)], $nin: [new ObjectId(ID)] } } })
  // $exists is an operator of every type: MongoDB holds it true of every element.
  t.same(filterOf(t, Activity, jsonFilter({ tags: { $elemMatch: { $exists: true } } })),
    { tags: { $elemMatch: { $exists: true } } })
  t.same(filterOf(t, Activity, 'filter[tags][$elemMatch][$exists]=true'), { tags: { $elemMatch: { $exists: true } } })
  t.same(filterOf(t, Session, jsonFilter({ places: { $elemMatch: { $exists: false } } })),
    { places: { $elemMatch: { $exists: false } } })
})

t.test('$or inside a scalar $elemMatch becomes alternatives, each one element', async (t) => {
  const or = {
    $or: [
      { tags: { $elemMatch: { $regex: '^yo', $nin: ['x'] } } },
      { tags: { $elemMatch: { $eq: 'pilates', $nin: ['x'] } } }
    ]
  }
  t.same(filterOf(t, Activity, jsonFilter({
    tags: { $elemMatch: { $or: [{ $regex: '^yo' }, { $eq: 'pilates' }], $ne: 'x' } }
  })), { $and: [or] })
  t.same(filterOf(t, Activity, 'filter[tags][$elemMatch][$or][0][$regex]=^yo' +
    '&filter[tags][$elemMatch][$or][1][$eq]=pilates&filter[tags][$elemMatch][$ne]=x'), { $and: [or] })
  // Two patterns on one element: the second joins $all, which holds each of its items.
  t.same(filterOf(t, Activity, jsonFilter({
    tags: { $elemMatch: { $and: [{ $regex: '^yo' }, { $regex: 'ga$', $options: 'i' }] } }
  })), { tags: { $elemMatch: { $regex: '^yo', $all: [new BSONRegExp('ga$', 'i')] } } })
})

t.test('refusals, each with its code and pointer', async (t) => {
  const cases: Array<[typeof Activity, unknown, string, string]> = [
    [Registration, { sessionsSubscriptions: { $elemMatch: { sesion: ID } } }, 'UNKNOWN_FIELD',
      '/sessionsSubscriptions/$elemMatch/sesion'],
    [Registration, { sessionsSubscriptions: { $elemMatch: { 'session.name': 'x' } } }, 'RELATED_PATH',
      '/sessionsSubscriptions/$elemMatch/session.name'],
    [Registration, { sessionsSubscriptions: { $elemMatch: { session: 'nope' } } }, 'INVALID_OBJECT_ID',
      '/sessionsSubscriptions/$elemMatch/session'],
    [Registration, { sessionsSubscriptions: { $elemMatch: { subscribedAt: '2024-02-30' } } }, 'INVALID_DATE',
      '/sessionsSubscriptions/$elemMatch/subscribedAt'],
    [Registration, { sessionsSubscriptions: { $elemMatch: { $gte: 3 } } }, 'OPERATOR_NOT_ALLOWED',
      '/sessionsSubscriptions/$elemMatch/$gte'],
    [Registration, { sessionsSubscriptions: { $elemMatch: { session: { $elemMatch: { $eq: ID } } } } },
      'OPERATOR_NOT_ALLOWED', '/sessionsSubscriptions/$elemMatch/session/$elemMatch'],
    [Registration, { sessionsSubscriptions: { $elemMatch: { $nor: [{ session: ID }] } } }, 'UNKNOWN_OPERATOR',
      '/sessionsSubscriptions/$elemMatch/$nor'],
    [Registration, { sessionsSubscriptions: { $elemMatch: { $where: 'x' } } }, 'BLOCKED_OPERATOR',
      '/sessionsSubscriptions/$elemMatch/$where'],
    [Registration, { role: { $elemMatch: { $eq: 'x' } } }, 'OPERATOR_NOT_ALLOWED', '/role/$elemMatch'],
    [Registration, { 'customFields.level': { $elemMatch: { $eq: 'x' } } }, 'OPERATOR_NOT_ALLOWED',
      '/customFields.level/$elemMatch'],
    [Registration, { 'sessionsSubscriptions.session': { $elemMatch: { $eq: ID } } }, 'OPERATOR_NOT_ALLOWED',
      '/sessionsSubscriptions.session/$elemMatch'],
    [Activity, { tags: { $elemMatch: {} } }, 'INVALID_VALUE', '/tags/$elemMatch'],
    [Activity, { tags: { $elemMatch: 'yoga' } }, 'INVALID_VALUE', '/tags/$elemMatch'],
    [Activity, { tags: { $elemMatch: { name: 'x' } } }, 'INVALID_VALUE', '/tags/$elemMatch/name'],
    [Activity, { tags: { $elemMatch: { $size: 2 } } }, 'OPERATOR_NOT_ALLOWED', '/tags/$elemMatch/$size'],
    [Activity, { tags: { $elemMatch: { $elemMatch: { $eq: 'x' } } } }, 'OPERATOR_NOT_ALLOWED',
      '/tags/$elemMatch/$elemMatch'],
    [Activity, { tags: { $elemMatch: { $regexp: 'x' } } }, 'UNKNOWN_OPERATOR', '/tags/$elemMatch/$regexp'],
    [Activity, { tags: { $elemMatch: { $where: '1' } } }, 'BLOCKED_OPERATOR', '/tags/$elemMatch/$where'],
    [Activity, { tags: { $elemMatch: { $or: [{ $near: [0, 0] }] } } }, 'BLOCKED_OPERATOR',
      '/tags/$elemMatch/$or/0/$near'],
    [Activity, { tags: { $elemMatch: { $regex: '(a+)+' } } }, 'UNSAFE_REGEX', '/tags/$elemMatch/$regex'],
    [Activity, { tags: { $elemMatch: { $options: 'i' } } }, 'INVALID_REGEX_OPTIONS', '/tags/$elemMatch/$options'],
    [Activity, { tags: { $elemMatch: { $or: [] } } }, 'INVALID_VALUE', '/tags/$elemMatch/$or'],
    [Activity, { tags: { $elemMatch: { $or: ['yoga'] } } }, 'INVALID_VALUE', '/tags/$elemMatch/$or/0'],
    [Activity, { tags: { $elemMatch: { $and: [{ $gt: 'a' }, { $gt: 'b' }] } } }, 'FILTER_TOO_COMPLEX',
      '/tags/$elemMatch'],
    [Session, { places: { $elemMatch: { $gt: ID } } }, 'OPERATOR_NOT_ALLOWED', '/places/$elemMatch/$gt'],
    [Session, { places: { $elemMatch: { $in: ['x'] } } }, 'INVALID_OBJECT_ID', '/places/$elemMatch/$in/0']
  ]
  for (const [schema, filter, code, pointer] of cases) {
    t.same(problemsOf(schema, jsonFilter(filter)), [{ code, pointer }], JSON.stringify(filter))
  }
  t.same(problemsOf(Registration, `filter[sessionsSubscriptions][$elemMatch][sesion]=${ID}`),
    [{ code: 'UNKNOWN_FIELD', pointer: '/sessionsSubscriptions/$elemMatch/sesion' }])
  t.same(problemsOf(Activity, jsonFilter({ tags: { $elemMatch: { $exists: 'yes' } } })),
    [{ code: 'INVALID_VALUE', pointer: '/tags/$elemMatch/$exists' }])
  t.same(problemsOf(Activity, 'filter[tags]=x&filter[tags][$elemMatch][$eq]=x'),
    [{ code: 'DUPLICATE_KEY', pointer: '/tags' }])
  // Nothing follows an operator inside $elemMatch, as nothing follows one outside it.
  for (const query of [
    'filter[tags][$elemMatch][$eq][junk]=yoga',
    'filter[tags][$elemMatch][$eq][$ne]=x',
    'filter[tags][$elemMatch][$regex]=^y&filter[tags][$elemMatch][$regex][$foo]=z'
  ]) {
    t.same(problemsOf(Activity, query), [{ code: 'UNKNOWN_PARAMETER', pointer: '' }], query)
  }
})

t.test('on a field that is no array, the message says $elemMatch applies to array fields only, and why', async (t) => {
  const messageOf = (filter: unknown): string | undefined => {
    const result = compileFor(Registration, jsonFilter(filter))
    return result.ok ? undefined : result.problems[0]?.message
  }
  t.equal(messageOf({ 'customFields.level': { $elemMatch: { $eq: 'x' } } }),
    "'$elemMatch' applies to array fields only; 'customFields.level' is a custom field")
  t.equal(messageOf({ 'sessionsSubscriptions.session': { $elemMatch: { $eq: ID } } }),
    "'$elemMatch' applies to array fields only; 'sessionsSubscriptions.session' is a ref field inside an array: " +
    'use $elemMatch on the array itself')
})

t.test('its conditions count toward the 50 and its $or toward the depth', async (t) => {
  const branch = (n: number) => Array.from({ length: n }, (_, i) => ({ $eq: `t${i}` }))
  // 10 alternatives of one condition each, 40 more outside: 50 in all.
  const fifty = {
    tags: { $elemMatch: { $or: branch(10) } },
    $and: Array.from({ length: 10 }, () => ({ name: { $gt: 'a', $lt: 'b', $ne: 'c', $nin: ['d'] } }))
  }
  t.ok(compileFor(Activity, jsonFilter(fifty)).ok, '50 conditions pass')
  const more = { ...fifty, active: true }
  t.same(problemsOf(Activity, jsonFilter(more)), [{ code: 'FILTER_TOO_COMPLEX', pointer: '' }], '51 do not')
  const deep = { $or: [{ $and: [{ tags: { $elemMatch: { $or: [{ $eq: 'a' }] } } }] }] }
  t.same(problemsOf(Activity, jsonFilter(deep)), [], 'three levels with the one inside')
  const deeper = { $or: [{ $and: [{ $or: [{ tags: { $elemMatch: { $or: [{ $eq: 'a' }] } } }] }] }] }
  t.same(problemsOf(Activity, jsonFilter(deeper)),
    [{ code: 'FILTER_TOO_COMPLEX', pointer: '/$or/0/$and/0/$or/0/tags/$elemMatch/$or' }],
    'a fourth level inside is refused')
  const wide = { tags: { $elemMatch: { $and: [{ $or: branch(4) }, { $or: branch(3) }] } } }
  t.same(problemsOf(Activity, jsonFilter(wide)), [{ code: 'FILTER_TOO_COMPLEX', pointer: '/tags/$elemMatch/$and' }],
    '4 × 3 alternatives are more than 10')
})
