// Problems that name their cause: one problem for one mistake, the bound a value passes, the field
// a path misses, the unit a group lacks, the space a URL made of a '+'.
import t from 'tap'
import { compileCountsQuery } from '../../list-query/compile-list-query.js'
import { buildQuerySpec } from '../../list-query/query-spec.js'
import { Activity, Registration, Session } from '../../schemas/kinds.js'
import { compileFor, jsonFilter } from '../helpers/list-query.js'
import { ok } from './values-compile.js'

const problems = (schema: Parameters<typeof compileFor>[0], query: string) => {
  const result = compileFor(schema, query)
  return result.ok ? [] : result.problems.map(({ pointer, code, message }) => ({ pointer, code, message }))
}

t.test('a refused key is one problem: what held it is not also empty', async (t) => {
  const refused = (key: string) => `No field is named '${key}': the key is refused anywhere in a filter`
  t.same(problems(Activity, jsonFilter('{"name":{"__proto__":"x"}}')),
    [{ pointer: '/name/__proto__', code: 'UNKNOWN_FIELD', message: refused('__proto__') }])
  t.same(problems(Activity, jsonFilter('{"name":{"constructor":"x"}}')),
    [{ pointer: '/name/constructor', code: 'UNKNOWN_FIELD', message: refused('constructor') }])
  t.same(problems(Activity, jsonFilter('{"tags":{"$elemMatch":{"__proto__":1}}}')),
    [{ pointer: '/tags/$elemMatch/__proto__', code: 'UNKNOWN_FIELD', message: refused('__proto__') }])
  t.same(problems(Registration, jsonFilter('{"sessionsSubscriptions":{"$elemMatch":{"__proto__":1}}}')),
    [{ pointer: '/sessionsSubscriptions/$elemMatch/__proto__', code: 'UNKNOWN_FIELD', message: refused('__proto__') }])
  t.same(problems(Activity, jsonFilter('{"tags":{"$elemMatch":{"$or":[{"__proto__":1}]}}}')),
    [{ pointer: '/tags/$elemMatch/$or/0/__proto__', code: 'UNKNOWN_FIELD', message: refused('__proto__') }])
  t.same(problems(Activity, jsonFilter('{"name":{"\\ud800":1}}')).map(({ code }) => code), ['INVALID_VALUE'],
    'a key with a lone surrogate too')
  t.match(problems(Activity, jsonFilter({ name: {} })), [{ pointer: '/name', code: 'INVALID_VALUE' }],
    'an object written empty is still refused as empty')
  t.match(problems(Activity, jsonFilter({ tags: { $elemMatch: {} } })), [{ pointer: '/tags/$elemMatch' }])
})

t.test('$size: the bound is said; a bracket value is the JSON number its text writes', async (t) => {
  t.same(problems(Activity, jsonFilter('{"tags":{"$size":2147483648}}')), [{
    pointer: '/tags/$size',
    code: 'INVALID_VALUE',
    message: '$size takes a non-negative integer up to 2147483647, not 2147483648'
  }])
  t.same(ok(Activity, 'filter[tags][$size]=2147483647').filter, { tags: { $size: 2147483647 } })
  for (const text of ['1.0', '1e0', '-0']) {
    t.same(ok(Activity, `filter[tags][$size]=${text}`).filter, { tags: { $size: Number(text) + 0 } }, text)
  }
  for (const text of ['01', '+1', '0x10', 'two', '', '2147483648']) {
    t.same(problems(Activity, `filter[tags][$size]=${encodeURIComponent(text)}`), [{
      pointer: '/tags/$size',
      code: 'INVALID_VALUE',
      message: `$size takes a non-negative integer up to 2147483647, not '${text}'`
    }], text)
  }
})

t.test('_id has no fields: a path inside it is unknown, not related', async (t) => {
  const message = "Unknown field '_id.foo' in filter: '_id' is the document's own object id and has no fields " +
    "inside; filter on '_id' itself"
  t.same(problems(Activity, jsonFilter({ '_id.foo': 'x' })), [{ pointer: '/_id.foo', code: 'UNKNOWN_FIELD', message }])
  t.match(problems(Activity, 'sort=-_id.foo'), [{ code: 'INVALID_SORT', message: /'_id' is the document's own/ }])
})

t.test('a path into an array of documents suggests its elements\' fields, closest first', async (t) => {
  t.same(problems(Registration, jsonFilter({ 'sessionsSubscriptions.foo': 'x' })), [{
    pointer: '/sessionsSubscriptions.foo',
    code: 'UNKNOWN_FIELD',
    message: "Unknown field 'sessionsSubscriptions.foo' in filter; the elements of 'sessionsSubscriptions' have " +
      "the fields 'sessionsSubscriptions.session' and 'sessionsSubscriptions.subscribedAt'"
  }])
  t.match(problems(Registration, jsonFilter({ 'sessionsSubscriptions.subscribed': 'x' }))[0]?.message,
    /have the fields 'sessionsSubscriptions\.subscribedAt' and 'sessionsSubscriptions\.session'$/, 'closest first')
  t.match(problems(Registration, jsonFilter({ sessionsSubscriptions: { $elemMatch: { sesion: 'x' } } })),
    [{ pointer: '/sessionsSubscriptions/$elemMatch/sesion', message: /did you mean 'session'\?/ }],
    'inside $elemMatch, the element\'s own fields as before')
  t.match(problems(Registration, 'sort=%2BsessionsSubscriptions.foo'), [{
    code: 'INVALID_SORT',
    message: "Unknown field 'sessionsSubscriptions.foo' in sort; 'sessionsSubscriptions' is an array of documents: " +
      'neither it nor its elements\' fields sort'
  }])
})

t.test('by: a unit that is none is named, with the units', async (t) => {
  const by = (text: string) => {
    const spec = buildQuerySpec(Session, { scopeField: 'project' })
    const result = compileCountsQuery(`by=${encodeURIComponent(text)}`, spec)
    return result.ok ? undefined : result.problems[0]?.message
  }
  t.match(by('start:week'), /^'week' is not a unit to group 'start' by: the units are day, month and year \(UTC\), as start:day; by takes one of /)
  t.match(by('start:'), /^'start:' names no unit after the colon: the units are day, month and year/)
  t.match(by('start'), /^'start' is a date: group it by a period, as start:day, start:month or start:year \(UTC\)/)
})

t.test('sort: a space where a sign was meant is said to be one', async (t) => {
  t.same(problems(Session, 'sort=+name,+-start'), [{
    pointer: '/1',
    code: 'INVALID_SORT',
    message: "Sort item ' -start' begins with a space, which is how a '+' written in a URL arrives: it reads as '+' " +
      "then '-start'. Write -start with no space before it (and a '+' as %2B)"
  }])
  const arrives = "a '+' written in a URL arrives as a space"
  t.same(problems(Session, 'sort=%2B+name'), [{
    pointer: '/0',
    code: 'INVALID_SORT',
    message: `Sort item '+ name' holds a space (${arrives}): write +name with no space (and a '+' as %2B)`
  }])
  t.match(problems(Session, 'sort=-start+'), [{ pointer: '/0', message: /^Sort item '-start ' holds a space .* -start / }])
  t.same(problems(Session, 'sort=++'), [{
    pointer: '/0',
    code: 'INVALID_SORT',
    message: `Sort item '  ' names no field (${arrives}): write +field or -field, and a '+' as %2B`
  }])
  t.same(ok(Session, 'sort=+name,+start').sort, { name: 1, start: 1, _id: 1 }, 'a raw + is still a +')
  t.match(problems(Session, 'sort=+nmae'), [{ message: "Unknown field 'nmae' in sort; did you mean 'name'?" }])
})

t.test("the docs' $elemMatch contrasts are filters the service takes (docs/query-language.md)", async (t) => {
  for (const filter of [
    '{"tags":{"$elemMatch":{"$and":[{"$regex":"^m"},{"$regex":"g$"}]}}}',
    '{"$and":[{"tags":{"$regex":"^m"}},{"tags":{"$regex":"g$"}}]}',
    '{"tags":{"$elemMatch":{"$ne":"music"}}}',
    '{"tags":{"$ne":"music"}}',
    '{"tags":{"$elemMatch":{"$gte":"b","$lt":"d"}}}'
  ]) {
    t.same(problems(Activity, jsonFilter(filter)), [], filter)
  }
  t.match(problems(Activity, jsonFilter('{"tags":{"$gte":"b","$lt":"d"}}')),
    [{ pointer: '/tags/$gte', code: 'OPERATOR_NOT_ALLOWED' }, { pointer: '/tags/$lt', code: 'OPERATOR_NOT_ALLOWED' }],
    'a range on the array itself is refused, as the docs say')
})

t.test('fields: an unknown name is told the name it likely misspells, in other capitals first', async (t) => {
  t.same(problems(Session, 'fields=name,strat'),
    [{ pointer: '/1', code: 'INVALID_FIELDS', message: "Unknown field 'strat' in fields; did you mean 'start'?" }])
  t.same(problems(Session, 'fields=NAME'),
    [{ pointer: '/0', code: 'INVALID_FIELDS', message: "Unknown field 'NAME' in fields; did you mean 'name'?" }])
  t.same(problems(Session, 'fields=zzzzzzzz'),
    [{ pointer: '/0', code: 'INVALID_FIELDS', message: "Unknown field 'zzzzzzzz' in fields" }],
    'nothing near: no guess')
})
