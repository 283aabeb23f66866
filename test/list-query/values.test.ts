// Value rules of the query language, both notations, through the pure compiler.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { parseDate } from '../../list-query/dates.js'
import { exactNumber } from '../../list-query/exact-number.js'
import { Activity, Place, Project, Registration, Session } from '../../schemas/kinds.js'
import { ID, ID2, compileFor, jsonFilter } from '../helpers/list-query.js'
import { ok, problem } from './values-compile.js'

t.test('bracket values are converted by the field type', async (t) => {
  t.same(ok(Activity, 'filter[active]=true').filter, { active: { $eq: true } })
  t.same(ok(Place, 'filter[maxNumberOfParticipants][$gte]=10').filter, { maxNumberOfParticipants: { $gte: 10 } })
  t.same(ok(Place, 'filter[maxNumberOfParticipants][$lt]=-2.5e1').filter, { maxNumberOfParticipants: { $lt: -25 } })
  t.same(ok(Session, 'filter[start][$gte]=2024-06-01T10:00:00Z').filter,
    { start: { $gte: new Date('2024-06-01T10:00:00Z') } })
  t.same(ok(Activity, `filter[category]=${ID}`).filter, { category: { $eq: new ObjectId(ID) } })
  t.same(ok(Activity, 'filter[tags][$all]=music,dance').filter, { tags: { $all: ['music', 'dance'] } })
  t.same(ok(Activity, 'filter[tags][$size]=2&filter[tags][$exists]=true').filter, { tags: { $size: 2, $exists: true } })
  t.same(ok(Activity, 'filter[customFields.level]=yoga').filter, { 'customFields.level': { $eq: 'yoga' } },
    'custom field text stays text')
  t.same(ok(Activity, 'filter[customFields.durationMinutes][$gt]=60').filter,
    { 'customFields.durationMinutes': { $gt: 60 } }, 'a custom field value written as a JSON number is that number')
  t.same(ok(Activity, 'filter[customFields.ratio][$lte]=-1.5e0&filter[customFields.vip]=true').filter,
    { 'customFields.ratio': { $lte: -1.5 }, 'customFields.vip': { $eq: true } }, 'and true or false that boolean')
  t.same(ok(Activity, 'filter[customFields.code][$in]=007,1.0,x,false').filter,
    { 'customFields.code': { $in: ['007', 1, 'x', false] } }, '007 is no JSON number: text')
  t.same(ok(Activity, jsonFilter({ 'customFields.level': '60' })).filter, { 'customFields.level': { $eq: '60' } },
    'JSON asks for the string "60"')
  t.match(problem(Activity, 'filter[customFields.n]=9007199254740993'),
    { code: 'INVALID_VALUE', pointer: '/customFields.n' }, 'beyond 2^53, as in JSON')
  t.same(ok(Activity, 'filter[tags][$in]=music,%20dance%20,theatre').filter,
    { tags: { $in: ['music', 'dance', 'theatre'] } }, 'list items are trimmed')
  t.same(ok(Activity, 'filter[tags][$all]=music+,+dance').filter, { tags: { $all: ['music', 'dance'] } },
    'also around a + that stands for a space')
  t.same(ok(Activity, 'filter[name][$regex]=yo%2Bga&filter[name][$options]=i').filter,
    { name: { $regex: 'yo+ga', $options: 'i' } })
})

t.test('bracket values that do not fit the type are refused', async (t) => {
  t.match(problem(Activity, 'filter[active]=yes'), { code: 'INVALID_VALUE', pointer: '/active' })
  t.match(problem(Place, 'filter[maxNumberOfParticipants]=ten'),
    { code: 'INVALID_VALUE', pointer: '/maxNumberOfParticipants' })
  t.match(problem(Activity, 'filter[category][$in]=' + ID + ',nope'),
    { code: 'INVALID_OBJECT_ID', pointer: '/category/$in/1' })
  t.match(problem(Activity, 'filter[tags][$size]=two'), { code: 'INVALID_VALUE', pointer: '/tags/$size' })
  t.match(problem(Activity, 'filter[name]=a&filter[name][$ne]=b'), { code: 'DUPLICATE_KEY', pointer: '/name' })
})

t.test('JSON literals must have the field type: no conversion from strings', async (t) => {
  t.match(problem(Activity, jsonFilter({ active: 'true' })), { code: 'INVALID_VALUE', pointer: '/active' })
  t.match(problem(Place, jsonFilter({ maxNumberOfParticipants: '5' })), { code: 'INVALID_VALUE' })
  t.match(problem(Activity, jsonFilter({ name: 5 })), { code: 'INVALID_VALUE' })
  t.match(problem(Activity, jsonFilter({ category: 5 })), { code: 'INVALID_OBJECT_ID' })
  t.match(problem(Session, jsonFilter({ start: 1717200000000 })), { code: 'INVALID_DATE' })
  t.same(ok(Activity, jsonFilter({ category: ID.toUpperCase() })).filter, { category: { $eq: new ObjectId(ID) } },
    'either case')
})

t.test('numbers are finite and within ±2^53', async (t) => {
  t.same(ok(Place, jsonFilter({ maxNumberOfParticipants: -(2 ** 53) })).filter,
    { maxNumberOfParticipants: { $eq: -(2 ** 53) } })
  t.match(problem(Place, jsonFilter('{"maxNumberOfParticipants":9007199254740994}')), { code: 'INVALID_VALUE' })
  t.match(problem(Place, jsonFilter('{"maxNumberOfParticipants":1e400}')), { code: 'INVALID_VALUE' })
  t.match(problem(Place, 'filter[maxNumberOfParticipants]=1e400'), { code: 'INVALID_VALUE' })
})

t.test('no null, arrays or objects as literals', async (t) => {
  t.match(problem(Activity, jsonFilter({ name: null })), { code: 'INVALID_VALUE', message: /\$exists/ })
  t.match(problem(Activity, jsonFilter({ tags: ['a'] })), { code: 'INVALID_VALUE', pointer: '/tags' })
  t.match(problem(Activity, jsonFilter({ name: {} })), { code: 'INVALID_VALUE', pointer: '/name' })
  t.match(problem(Activity, jsonFilter({ name: { $eq: 'a', first: 'b' } })),
    { code: 'INVALID_VALUE', pointer: '/name/first' })
  t.match(problem(Activity, jsonFilter({ name: { $in: ['a', null] } })),
    { code: 'INVALID_VALUE', pointer: '/name/$in/1' })
  t.match(problem(Registration, jsonFilter({ 'customFields.ticket': { a: 1 } })), { code: 'INVALID_VALUE' })
})

t.test('$exists, $size and the list operators check their operands', async (t) => {
  t.match(problem(Activity, jsonFilter({ name: { $exists: 'true' } })),
    { code: 'INVALID_VALUE', pointer: '/name/$exists' })
  t.match(problem(Activity, jsonFilter({ tags: { $size: -1 } })), { code: 'INVALID_VALUE' })
  t.match(problem(Activity, jsonFilter({ tags: { $size: 1.5 } })), { code: 'INVALID_VALUE' })
  t.match(problem(Activity, jsonFilter({ name: { $in: 'a' } })), { code: 'INVALID_VALUE', pointer: '/name/$in' })
  t.ok(compileFor(Session, jsonFilter({ places: { $in: Array(100).fill(ID2) } })).ok, '100 values are accepted')
  t.match(problem(Session, jsonFilter({ places: { $all: Array(101).fill(ID2) } })),
    { code: 'ARRAY_TOO_LARGE', pointer: '/places/$all' })
  t.same(ok(Activity, jsonFilter({ name: { $in: [] } })).filter, { name: { $in: [] } },
    'an empty $in matches nothing, as in MongoDB')
  // A bracket $size is the JSON number its text writes: both notations agree.
  for (const text of ['0', '-0', '2', '1e2', '2.0', '2147483647', '2147483648', '1.5', '-1', '01', '+1', '0x10', '']) {
    const json = compileFor(Activity, `filter=${encodeURIComponent(`{"tags":{"$size":${text}}}`)}`)
    const brackets = compileFor(Activity, `filter[tags][$size]=${encodeURIComponent(text)}`)
    t.same(brackets.ok ? brackets.query.filter : brackets.problems[0]?.code,
      json.ok ? json.query.filter : 'INVALID_VALUE', `$size ${JSON.stringify(text)}`)
  }
  t.same(ok(Activity, 'filter[tags][$size]=-0').filter, { tags: { $size: 0 } })
})

t.test('$regex: 500 characters, must compile, must be safe', async (t) => {
  t.ok(compileFor(Activity, jsonFilter({ name: { $regex: 'a'.repeat(500) } })).ok)
  t.match(problem(Activity, jsonFilter({ name: { $regex: 'a'.repeat(501) } })), { code: 'REGEX_TOO_LONG' })
  // Characters are code points, as JSON Schema's maxLength counts them: 500 emoji are 1,000 UTF-16 units.
  t.ok(compileFor(Activity, jsonFilter({ name: { $regex: '😀'.repeat(500) } })).ok, '500 astral characters')
  t.match(problem(Activity, jsonFilter({ name: { $regex: '😀'.repeat(501) } })),
    { code: 'REGEX_TOO_LONG', message: /not 501/ })
  t.match(problem(Activity, jsonFilter({ name: { $regex: '[a-' } })), { code: 'INVALID_REGEX' })
  for (const unsafe of ['(a+)+', '(a*)*b', '(x+x+)+y', '([a-z]+)*$']) {
    t.match(problem(Activity, jsonFilter({ name: { $regex: unsafe } })), { code: 'UNSAFE_REGEX' }, unsafe)
  }
  t.match(problem(Activity, jsonFilter({ name: { $regex: 1 } })), { code: 'INVALID_VALUE' })
  t.same(ok(Activity, jsonFilter({ name: { $regex: '^yo', $options: 'imsx' } })).filter,
    { name: { $regex: '^yo', $options: 'imsx' } })
})

t.test('custom fields: names of 1–64 safe characters, scalar values compared as given', async (t) => {
  t.ok(compileFor(Activity, jsonFilter({ [`customFields.${'a'.repeat(64)}`]: 1 })).ok)
  t.match(problem(Activity, jsonFilter({ [`customFields.${'a'.repeat(65)}`]: 1 })),
    { code: 'UNKNOWN_FIELD', message: /customFields\.<name>/ })
  t.match(problem(Activity, jsonFilter({ 'customFields.a.b': 1 })), { code: 'UNKNOWN_FIELD' })
  t.match(problem(Activity, jsonFilter({ 'customFields.a b': 1 })), { code: 'UNKNOWN_FIELD' })
  t.same(ok(Activity, jsonFilter({ 'customFields.since': { $gte: '2024-01-01' } })).filter,
    { 'customFields.since': { $gte: '2024-01-01' } }, 'no date conversion')
  t.same(ok(Activity, jsonFilter({ 'customFields.vip': true, 'customFields.level': { $gt: 2 } })).filter,
    { 'customFields.vip': { $eq: true }, 'customFields.level': { $gt: 2 } })
})

t.test('paths: related objects, the scope field, unknown fields', async (t) => {
  t.match(problem(Registration, jsonFilter({ 'user.email': 'a' })), { code: 'RELATED_PATH', pointer: '/user.email' })
  t.match(problem(Session, jsonFilter({ 'places.name': 'a' })), { code: 'RELATED_PATH' })
  t.match(problem(Registration, jsonFilter({ 'sessionsSubscriptions.session.name': 'a' })), { code: 'RELATED_PATH' })
  t.match(problem(Session, jsonFilter({ 'project.name': 'a' })), { code: 'RELATED_PATH' })
  t.match(problem(Session, jsonFilter({ project: ID })), { code: 'SCOPE_FIELD' })
  t.match(compileFor(Project, jsonFilter({ project: ID }), { scoped: false }),
    { ok: false, problems: [{ code: 'UNKNOWN_FIELD' }] }, 'projects have no project field')
  t.match(problem(Activity, jsonFilter({ 'a/b~c': 1 })), { code: 'UNKNOWN_FIELD', pointer: '/a~1b~0c' },
    'pointers escape ~ and /')
  t.match(problem(Activity, jsonFilter({ Name: 1 })), { message: /did you mean 'name'/ })
  t.match(problem(Activity, jsonFilter({ '': 1 })), { code: 'UNKNOWN_FIELD', pointer: '/' })
})

t.test('bracket keys cannot pollute prototypes', async (t) => {
  t.match(problem(Activity, 'filter[__proto__][polluted]=1'), { code: 'UNKNOWN_FIELD' })
  t.match(problem(Activity, 'filter[constructor]=1'), { code: 'UNKNOWN_FIELD' })
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('dates: the three forms, and impossible dates', async (t) => {
  t.same(parseDate('2024'),
    { kind: 'period', start: new Date('2024-01-01T00:00:00Z'), end: new Date('2025-01-01T00:00:00Z') })
  t.same(parseDate('2024-02-29'),
    { kind: 'period', start: new Date('2024-02-29T00:00:00Z'), end: new Date('2024-03-01T00:00:00Z') })
  t.same(parseDate('2024-06-01T10:00:00.123Z'), { kind: 'instant', at: new Date('2024-06-01T10:00:00.123Z') })
  t.same(parseDate('2024-06-01T10:00:00+02:00'), { kind: 'instant', at: new Date('2024-06-01T08:00:00Z') })
  t.same(parseDate('2024-06-01T00:30:00-01:30'), { kind: 'instant', at: new Date('2024-06-01T02:00:00Z') })
  t.same(parseDate('0099'),
    { kind: 'period', start: new Date('0099-01-01T00:00:00Z'), end: new Date('0100-01-01T00:00:00Z') })
  for (const bad of [
    '2023-02-29', '2024-13-01', '2024-00-10', '2024-04-31', '2024-06-01T24:00:00Z', '2024-06-01T10:60:00Z',
    '2024-06-01T10:00:60Z', '2024-06-01T10:00:00', '2024-06-01T10:00Z', '2024-06-01T10:00:00.12Z',
    '2024-06-01 10:00:00Z', '24-06-01', '2024-6-1', '202', 'June 2024', '2024-06-01T10:00:00+24:00'
  ]) {
    t.equal(parseDate(bad), undefined, bad)
  }
})

t.test('date-only and year-only values name whole UTC periods', async (t) => {
  const day = { start: new Date('2024-06-01T00:00:00Z'), end: new Date('2024-06-02T00:00:00Z') }
  const f = (condition: unknown) => ok(Session, jsonFilter({ start: condition })).filter
  t.same(f('2024-06-01'), { start: { $gte: day.start, $lt: day.end } })
  t.same(f({ $eq: '2024-06-01' }), { start: { $gte: day.start, $lt: day.end } })
  t.same(f({ $ne: '2024-06-01' }), { $and: [{ start: { $not: { $gte: day.start, $lt: day.end } } }] })
  t.same(f({ $gt: '2024-06-01' }), { start: { $gte: day.end } })
  t.same(f({ $gte: '2024-06-01' }), { start: { $gte: day.start } })
  t.same(f({ $lt: '2024-06-01' }), { start: { $lt: day.start } })
  t.same(f({ $lte: '2024-06-01' }), { start: { $lt: day.end } })
  t.same(f({ $in: ['2024-06-01', '2024-06-03T10:00:00Z'] }),
    { $and: [{ $or: [{ start: { $gte: day.start, $lt: day.end } }, { start: new Date('2024-06-03T10:00:00Z') }] }] })
  t.same(f({ $nin: ['2024-06-01'] }), { $and: [{ $nor: [{ start: { $gte: day.start, $lt: day.end } }] }] })
  t.same(f({ $in: ['2024-06-01T10:00:00Z'] }), { start: { $in: [new Date('2024-06-01T10:00:00Z')] } },
    'instants only: a plain $in')
  t.same(f({ $eq: '2024-06-01', $gte: '2024-06-01T12:00:00Z' }),
    { start: { $gte: day.start, $lt: day.end }, $and: [{ start: { $gte: new Date('2024-06-01T12:00:00Z') } }] },
    'a repeated operator goes to $and')
})

t.test('JSON nested deeper than any filter: the code and pointer of what holds it, ' +
  'INVALID_JSON only for broken text', async (t) => {
  const problems = (text: string) => {
    const result = compileFor(Activity, `filter=${encodeURIComponent(text)}`)
    return result.ok ? [] : result.problems.map((p) => [p.code, p.pointer])
  }
  const nested = (depth: number, wrap: (inner: string) => string, core: string): string => {
    let text = core
    for (let i = 0; i < depth; i++) text = wrap(text)
    return text
  }
  for (const depth of [4, 16, 17, 100, 800]) {
    t.same(problems(nested(depth, (inner) => `{"$or":[${inner}]}`, '{"name":"x"}')),
      [['FILTER_TOO_COMPLEX', '/$or/0/$or/0/$or/0/$or']], `$or ${depth} deep`)
  }
  for (const depth of [1, 31, 32, 33, 2000]) {
    const arrays = nested(depth, (inner) => `[${inner}]`, '{"a":[1,"x",{"b":null,"c":[true,false]}],"d":-1.5e3}')
    t.same(problems(`{"name":{"$in":${arrays}}}`), [['INVALID_VALUE', '/name/$in/0']], `arrays ${depth} deep in $in`)
    t.same(problems(`{"name":{"$in":${arrays.slice(0, -1)}}}`), [['INVALID_JSON', '']],
      `${depth} deep, a bracket missing`)
    t.same(problems(`{"name":{"$in":${arrays.replace('null', 'nul')}}}`), [['INVALID_JSON', '']],
      `${depth} deep, a broken literal`)
  }
  t.same(problems(nested(40, (inner) => `{"$elemMatch":${inner}}`, '"x"').replace(/^/, '{"tags":') + '}'),
    [['OPERATOR_NOT_ALLOWED', '/tags/$elemMatch/$elemMatch']])
})

t.test('a problem found by two checks is listed once', async (t) => {
  const cases = [
    [Activity, { 'customFields.n': '9007199254740993.5' }, '/customFields.n'],
    [Activity, { tags: { $size: '1e400' } }, '/tags/$size'],
    [Activity, { tags: { $size: '9007199254740993' } }, '/tags/$size']
  ] as const
  for (const [schema, filter, pointer] of cases) {
    const text = JSON.stringify(filter).replace(/"([-\d.e]+)"/g, '$1')
    const result = compileFor(schema, `filter=${encodeURIComponent(text)}`)
    t.same(result.ok ? [] : result.problems.map((p) => [p.code, p.pointer]), [['INVALID_VALUE', pointer]], text)
  }
})

t.test('numbers are judged by their text, not by the double they round to', async (t) => {
  const cases: Array<[string, boolean]> = [
    ['9007199254740992', true], ['-9007199254740992', true], ['9007199254740993', false], ['-9007199254740993', false],
    ['9.007199254740993e15', false], ['9.007199254740992e15', true], ['1e16', false], ['1E300', false],
    ['100000000000000000000e-4', false], ['0.1', true], ['1.5', true], ['123456789012345678e-2', true],
    ['12345678901234567890e-4', true], ['0e999', true], ['1e-400', true], ['9007199254740991.5', true],
    ['9007199254740992.5', false], ['-9007199254740992.5', false], ['90071992547409925e-1', false],
    ['9007199254740992.000000000000000000001', false], ['-900719925474099.25e1', false], ['-900719925474099.15e1', true]
  ]
  for (const [text, exact] of cases) {
    t.equal(exactNumber(text) !== undefined, exact, text)
    const res = compileFor(Place, `filter=${encodeURIComponent(`{"maxNumberOfParticipants":${text}}`)}`)
    t.equal(res.ok, exact, `${text} in a filter`)
  }
})

t.test('a refused $regex says who refuses it: MongoDB\'s engine, or the service by its own rule ' +
  'with the way to write it', async (t) => {
  const message = (pattern: string): string =>
    (problem(Activity, jsonFilter({ name: { $regex: pattern } })) as { message: string }).message
  t.match(message('a{70000}'), /^\$regex is not a pattern MongoDB's regex engine \(PCRE2\) compiles: /)
  t.match(message('\\u0041'), /PCRE2\) compiles/)
  t.match(message('(?i)yoga'), /^\$regex uses syntax this service refuses by its own rule .*\$options \("i"/)
  t.match(message('a++'), /its own rule.*write a\+$/)
  t.match(message('(?P<y>\\d{4})'), /its own rule.*\(\?<name>…\)/)
  t.match(message('^(a|aa)+$'), /^\$regex is refused by this service's safety rule/)
})
