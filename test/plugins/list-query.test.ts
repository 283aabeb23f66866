// Every error code of the query language, through HTTP: status, problem+json, code and pointer,
// and no handler (so no database query) for a rejected request.
import t from 'tap'
import { buildQuerySpec } from '../../list-query/query-spec.js'
import { Activity, Session } from '../../schemas/kinds.js'
import { build } from '../helpers/build.js'
import { ID, jsonFilter } from '../helpers/list-query.js'

let handlerCalls = 0
const fastify = await build(t, {
  config: { MAX_LIMIT: 500, DEFAULT_LIMIT: 50, MAX_SKIP: 1000 },
  extend: (app) => {
    for (const [path, schema] of [['/test/sessions', Session], ['/test/activities', Activity]] as const) {
      app.get(path, { config: { listQuery: buildQuerySpec(schema, { scopeField: 'project' }) } }, async (request) => {
        handlerCalls++
        return request.listQuery
      })
    }
    app.get('/test/plain', async (request) => ({ listQuery: request.listQuery }))
  }
})

type Case = [string, string, string, string, string?]
// [what, query string, code, pointer, param (default filter)]
const cases: Case[] = [
  ['malformed JSON', 'filter={"name":', 'INVALID_JSON', ''],
  ['a __proto__ key', jsonFilter('{"__proto__":{"name":"x"}}'), 'UNKNOWN_FIELD', '/__proto__'],
  ['a __proto__ key in a branch of $or, written with \\u escapes', jsonFilter('{"$or":[{"\\u005f_proto__":1}]}'),
    'UNKNOWN_FIELD', '/$or/0/__proto__'],
  ['a constructor key in a branch of $or', jsonFilter('{"$or":[{"constructor":1}]}'),
    'UNKNOWN_FIELD', '/$or/0/constructor'],
  ['a top-level constructor key written with \\u escapes (a field name no kind has)',
    jsonFilter('{"\\u0063onstructor":1}'), 'UNKNOWN_FIELD', '/constructor'],
  ['a top-level prototype key', jsonFilter('{"prototype":{"$eq":1}}'), 'UNKNOWN_FIELD', '/prototype'],
  ['a constructor key inside a field\'s operators', jsonFilter('{"name":{"constructor":1}}'),
    'UNKNOWN_FIELD', '/name/constructor'],
  ['a prototype key inside an operator', jsonFilter('{"name":{"$in":[{"prototype":1}]}}'),
    'UNKNOWN_FIELD', '/name/$in/0/prototype'],
  ['a duplicate key', jsonFilter('{"name":"a","name":"b"}'), 'DUPLICATE_KEY', '/name'],
  ['a JSON array', jsonFilter([{ name: 'a' }]), 'FILTER_NOT_OBJECT', ''],
  ['a JSON string', jsonFilter('"name"'), 'FILTER_NOT_OBJECT', ''],
  ['10,001 characters', jsonFilter(`{"name":"${'x'.repeat(9_990)}"}`), 'FILTER_TOO_LARGE', ''],
  ['a misspelt field', jsonFilter({ nmae: 'x' }), 'UNKNOWN_FIELD', '/nmae'],
  ['a related path', jsonFilter({ 'activity.name': 'x' }), 'RELATED_PATH', '/activity.name'],
  ['the scope field', jsonFilter({ project: ID }), 'SCOPE_FIELD', '/project'],
  ['$where', jsonFilter({ $where: 'sleep(1000)' }), 'BLOCKED_OPERATOR', '/$where'],
  ['$near inside a field', jsonFilter({ start: { $near: [1, 2] } }), 'BLOCKED_OPERATOR', '/start/$near'],
  ['$nor', jsonFilter({ $nor: [{ name: 'a' }] }), 'UNKNOWN_OPERATOR', '/$nor'],
  ['$not at the top', jsonFilter({ $not: { name: 'a' } }), 'UNKNOWN_OPERATOR', '/$not'],
  ['$expr in a branch', jsonFilter({ $or: [{ name: 'a' }, { $expr: { $gt: ['$a', 1] } }] }),
    'UNKNOWN_OPERATOR', '/$or/1/$expr'],
  ['$or inside a field', jsonFilter({ name: { $or: ['a', 'b'] } }), 'UNKNOWN_OPERATOR', '/name/$or'],
  ['$where in a nested branch', jsonFilter({ $and: [{ $or: [{ $where: '1' }] }] }),
    'BLOCKED_OPERATOR', '/$and/0/$or/0/$where'],
  ['a misspelt field in a branch', jsonFilter({ $or: [{ name: 'a' }, { nmae: 'b' }] }), 'UNKNOWN_FIELD', '/$or/1/nmae'],
  ['the scope field in a branch', jsonFilter({ $or: [{ name: 'a' }, { project: ID }] }),
    'SCOPE_FIELD', '/$or/1/project'],
  ['an unsafe pattern in a branch', jsonFilter({ $or: [{ name: { $regex: '(a+)+$' } }] }),
    'UNSAFE_REGEX', '/$or/0/name/$regex'],
  ['an impossible date in a branch of $and', jsonFilter({ $and: [{ start: '2024-02-30' }] }),
    'INVALID_DATE', '/$and/0/start'],
  ['$or that is not an array', jsonFilter({ $or: { name: 'a' } }), 'INVALID_VALUE', '/$or'],
  ['an empty $or', jsonFilter({ $or: [] }), 'INVALID_VALUE', '/$or'],
  ['a branch that is not an object', jsonFilter({ $and: [{ name: 'a' }, 'b'] }), 'INVALID_VALUE', '/$and/1'],
  ['a branch that is an array', jsonFilter({ $or: [[{ name: 'a' }]] }), 'INVALID_VALUE', '/$or/0'],
  ['eleven branches', jsonFilter({ $or: Array.from({ length: 11 }, (_, i) => ({ name: String(i) })) }),
    'FILTER_TOO_COMPLEX', '/$or'],
  ['$or nested four deep', jsonFilter({ $or: [{ $and: [{ $or: [{ $and: [{ name: 'a' }] }] }] }] }),
    'FILTER_TOO_COMPLEX', '/$or/0/$and/0/$or/0/$and'],
  ['51 field conditions', jsonFilter({
    $or: Array.from({ length: 10 }, () => ({ name: { $gt: 'a', $lt: 'z', $ne: 'm', $exists: true, $nin: ['q'] } })),
    email: 'x'
  }), 'FILTER_TOO_COMPLEX', ''],
  ['a bracket branch index with a gap', 'filter[$or][0][name]=a&filter[$or][2][name]=b', 'INVALID_VALUE', '/$or'],
  ['a bracket branch index over 9', 'filter[$or][10][name]=a', 'INVALID_VALUE', '/$or'],
  ['a bracket branch index that is not a number', 'filter[$and][first][name]=a', 'INVALID_VALUE', '/$and'],
  ['a bracket branch index with a leading zero', 'filter[$or][00][name]=a', 'INVALID_VALUE', '/$or'],
  ['a bracket $or with a value', 'filter[$or]=a', 'INVALID_VALUE', '/$or'],
  ['a bracket $or nested four deep', 'filter[$or][0][$and][0][$or][0][$or][0][name]=a',
    'FILTER_TOO_COMPLEX', '/$or/0/$and/0/$or/0/$or'],
  ['$expr inside a field', jsonFilter({ name: { $expr: 1 } }), 'UNKNOWN_OPERATOR', '/name/$expr'],
  ['$regex on a date', jsonFilter({ start: { $regex: '2024' } }), 'OPERATOR_NOT_ALLOWED', '/start/$regex'],
  ['null as a value', jsonFilter({ name: null }), 'INVALID_VALUE', '/name'],
  ['an impossible date', jsonFilter({ start: '2024-02-30' }), 'INVALID_DATE', '/start'],
  ['a timestamp without offset', jsonFilter({ start: { $gte: '2024-06-01T10:00:00' } }), 'INVALID_DATE', '/start/$gte'],
  ['a bad object id', jsonFilter({ activity: '123' }), 'INVALID_OBJECT_ID', '/activity'],
  ['a 501-character pattern', jsonFilter({ name: { $regex: 'a'.repeat(501) } }), 'REGEX_TOO_LONG', '/name/$regex'],
  ['a pattern that does not compile', jsonFilter({ name: { $regex: '(' } }), 'INVALID_REGEX', '/name/$regex'],
  ['a nested quantifier', jsonFilter({ name: { $regex: '(a+)+$' } }), 'UNSAFE_REGEX', '/name/$regex'],
  ['an unknown regex flag', jsonFilter({ name: { $regex: 'a', $options: 'g' } }),
    'INVALID_REGEX_OPTIONS', '/name/$options'],
  ['a repeated regex flag', jsonFilter({ name: { $regex: 'a', $options: 'ii' } }),
    'INVALID_REGEX_OPTIONS', '/name/$options'],
  ['$options without $regex', jsonFilter({ name: { $options: 'i' } }), 'INVALID_REGEX_OPTIONS', '/name/$options'],
  ['101 values in $in', jsonFilter({ stewards: { $in: Array(101).fill(ID) } }), 'ARRAY_TOO_LARGE', '/stewards/$in'],
  ['both notations', `${jsonFilter({ name: 'a' })}&filter[name]=b`, 'MIXED_FILTER_NOTATION', ''],
  ['a sort without direction', 'sort=name', 'INVALID_SORT', '/0', 'sort'],
  ['a sort on an array field', 'sort=%2Bname,-places', 'INVALID_SORT', '/1', 'sort'],
  ['a duplicate sort field', 'sort=%2Bname,-name', 'INVALID_SORT', '/1', 'sort'],
  ['six sort fields', 'sort=%2Bname,%2Bemail,%2Bstart,%2Bend,%2Bactivity,%2BcreatedAt', 'INVALID_SORT', '/5', 'sort'],
  ['a negative limit', 'limit=-1', 'INVALID_LIMIT', '', 'limit'],
  ['an unknown field in fields', 'fields=name,strat', 'INVALID_FIELDS', '/1', 'fields'],
  ['a related path in fields', 'fields=activity.name', 'INVALID_FIELDS', '/0', 'fields'],
  ['an empty item in fields', 'fields=name,,start', 'INVALID_FIELDS', '/1', 'fields'],
  ['a repeated field in fields', 'fields=name,start,name', 'INVALID_FIELDS', '/2', 'fields'],
  ['customFields.__proto__ in fields', 'fields=name,customFields.__proto__', 'INVALID_FIELDS', '/1', 'fields'],
  ['customFields.constructor in fields', 'fields=customFields.constructor', 'INVALID_FIELDS', '/0', 'fields'],
  ['after with skip', 'after=abc.def&skip=10', 'INVALID_CURSOR', '', 'after'],
  ['an empty after', 'after=', 'INVALID_CURSOR', '', 'after'],
  ['limit above MAX_LIMIT', 'limit=501', 'INVALID_LIMIT', '', 'limit'],
  ['limit with an exponent', 'limit=1e2', 'INVALID_LIMIT', '', 'limit'],
  ['a negative skip', 'skip=-1', 'INVALID_SKIP', '', 'skip'],
  ['skip above MAX_SKIP', 'skip=1001', 'INVALID_SKIP', '', 'skip'],
  ['count=yes', 'count=yes', 'INVALID_COUNT', '', 'count'],
  ['limit given twice', 'limit=1&limit=2', 'DUPLICATE_PARAMETER', '', 'limit'],
  ['the same bracket twice', 'filter[name]=a&filter[name]=b', 'DUPLICATE_PARAMETER', '', 'filter[name]'],
  ['an unknown parameter', 'page=2', 'UNKNOWN_PARAMETER', '', 'page'],
  ['a too deep bracket key', 'filter[name][$in][0]=a', 'UNKNOWN_PARAMETER', '', 'filter[name][$in][0]']
]

for (const [what, query, code, pointer, param = 'filter'] of cases) {
  t.test(`${what} → 400 ${code} at ${param}${pointer}`, async (t) => {
    const before = handlerCalls
    const res = await fastify.inject(`/test/sessions?${query}`)
    t.equal(res.statusCode, 400)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
    const body = res.json()
    t.match(body, { type: 'about:blank', title: 'Bad Request', status: 400, code })
    t.same(body.errors[0], { param, pointer, code, message: body.detail },
      'the first problem is repeated in code/detail')
    t.equal(handlerCalls, before, 'the handler, and so the database, is never reached')
  })
}

t.test('every problem is listed, at most 20', async (t) => {
  const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`unknown${i}`, 1]))
  const res = await fastify.inject(`/test/sessions?${jsonFilter(many)}`)
  t.equal(res.json().errors.length, 20)
  const mixed = await fastify.inject(`/test/sessions?${jsonFilter({ nmae: 1, start: 'x' })}&sort=name&limit=-1`)
  t.same(mixed.json().errors.map((e: { code: string }) => e.code),
    ['UNKNOWN_FIELD', 'INVALID_DATE', 'INVALID_SORT', 'INVALID_LIMIT'])
})

t.test('every problem of every branch is listed in one answer, with its pointer through the branches', async (t) => {
  const filter = {
    nmae: 'a',
    $or: [{ start: '2024-02-30' }, { name: { $regex: '(a+)+$' } }, 'x'],
    $and: [{ $or: [{ places: { $in: ['1'] } }, {}] }, { $nor: [] }]
  }
  const res = await fastify.inject(`/test/sessions?${jsonFilter(filter)}`)
  t.equal(res.statusCode, 400)
  t.same(res.json().errors.map((e: { code: string, pointer: string }) => `${e.code} ${e.pointer}`), [
    'UNKNOWN_FIELD /nmae',
    'INVALID_DATE /$or/0/start',
    'UNSAFE_REGEX /$or/1/name/$regex',
    'INVALID_VALUE /$or/2',
    'INVALID_OBJECT_ID /$and/0/$or/0/places/$in/0',
    'UNKNOWN_OPERATOR /$and/1/$nor'
  ])
})

t.test('$or and $and reach the handler compiled, the same from JSON and from brackets', async (t) => {
  const json = await fastify.inject('/test/sessions?' +
    `${jsonFilter({ $or: [{ name: 'Yoga' }, { places: { $in: [ID, ID] } }, {}], $and: [{ start: '2024' }] })}`)
  t.equal(json.statusCode, 200)
  const expected = {
    $or: [{ name: { $eq: 'Yoga' } }, { places: { $in: [ID, ID] } }, {}],
    $and: [{ start: { $gte: '2024-01-01T00:00:00.000Z', $lt: '2025-01-01T00:00:00.000Z' } }]
  }
  t.same(json.json().filter, expected, 'a date-only value is its period inside a branch too')
  const brackets = await fastify.inject('/test/sessions?filter[$or][0][name]=Yoga' +
    `&filter[$or][1][places][$in]=${ID},${ID}&filter[$and][0][start]=2024`)
  t.equal(brackets.statusCode, 200)
  t.same(brackets.json().filter, { $or: expected.$or.slice(0, 2), $and: expected.$and })
})

t.test('"did you mean" suggests a near field name', async (t) => {
  const res = await fastify.inject(`/test/sessions?${jsonFilter({ nmae: 'x' })}`)
  t.equal(res.json().detail, "Unknown field 'nmae' in filter; did you mean 'name'?")
  const far = await fastify.inject(`/test/sessions?${jsonFilter({ zzzzzz: 'x' })}`)
  t.equal(far.json().detail, "Unknown field 'zzzzzz' in filter")
})

t.test('a related path says that related objects cannot be filtered', async (t) => {
  const res = await fastify.inject(`/test/activities?${jsonFilter({ 'category.name': 'Music' })}`)
  t.match(res.json().detail, /related objects cannot be filtered/)
})

t.test('a valid request reaches the handler with request.listQuery filled', async (t) => {
  const res = await fastify.inject(`/test/sessions?${jsonFilter({ name: 'a' })}` +
    '&sort=-start&limit=10&skip=20&count=true')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { filter: { name: { $eq: 'a' } }, sort: { start: -1, _id: 1 }, skip: 20, limit: 10, count: true })
})

t.test('configured defaults apply', async (t) => {
  const res = await fastify.inject('/test/sessions')
  t.same(res.json(), { filter: {}, sort: { _id: 1 }, skip: 0, limit: 50, count: false })
})

t.test('routes that do not opt in are untouched', async (t) => {
  const res = await fastify.inject('/test/plain?anything=1&anything=2')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { listQuery: null })
})

t.test('a compiled query is reused for the same query string, and a page does not change it', async (t) => {
  const seen: unknown[] = []
  const fastify = await build(t, {
    extend: (app) => { app.addHook('onResponse', async (request) => { seen.push(request.listQuery) }) }
  })
  const url = '/projects?filter={"name":{"$regex":"^a"},"_id":{"$gt":"000000000000000000000000"}}&sort=-name&limit=1'
  const first = await fastify.inject(url)
  const text = JSON.stringify(seen[0])
  const second = await fastify.inject(url)
  t.equal(second.body, first.body)
  t.equal(seen[1], seen[0], 'the same compiled query object')
  t.equal(JSON.stringify(seen[1]), text, 'unchanged by the requests that used it')
  await fastify.inject(url.replace('limit=1', 'limit=2'))
  t.not(seen[2], seen[0], 'another query string compiles anew')
})
