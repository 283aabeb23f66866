// The query string's parameters through the pure compiler: its own rules, limit, skip and count,
// sort, and the messages that teach a sort key without its sign or a $regex between slashes.
import t from 'tap'
import { Activity, Registration, Session } from '../../schemas/kinds.js'
import { compileFor } from '../helpers/list-query.js'
import { ok, problem } from './values-compile.js'

t.test('query-string rules', async (t) => {
  t.match(problem(Activity, 'Filter=1'), { code: 'UNKNOWN_PARAMETER', param: 'Filter' })
  t.match(problem(Activity, 'filter[]=1'), { code: 'UNKNOWN_PARAMETER' })
  t.match(problem(Activity, 'filter=%E0%A4%A'), { code: 'INVALID_JSON', param: 'filter' })
  t.match(problem(Activity, 'limit=%zz'), { code: 'INVALID_LIMIT', param: 'limit' })
  t.match(problem(Activity, 'filter[name]=%zz'), { code: 'INVALID_VALUE' })
  t.match(problem(Activity, 'count=1&count=1'), { code: 'DUPLICATE_PARAMETER', param: 'count' })
  t.ok(compileFor(Activity, 'limit=5&&skip=1&').ok, 'empty pieces are ignored')
})

t.test('limit, skip and count: decimal integers only', async (t) => {
  t.match(ok(Activity, 'limit=007&skip=0&count=false'), { limit: 7, skip: 0, count: false })
  t.match(ok(Activity, 'limit=1000&skip=100000&count=true'), { limit: 1000, skip: 100000, count: true })
  t.match(ok(Activity, `limit=${'0'.repeat(40)}12&skip=${'0'.repeat(40)}`), { limit: 12, skip: 0 },
    'any number of leading zeros')
  for (const bad of [
    'limit=', 'limit=%2B5', 'limit=+5', 'limit=5.0', 'limit=-1', 'limit=1e3', 'limit=0x10', 'limit=1001',
    'limit=99999999999999999999', `limit=${'0'.repeat(20)}1001`
  ]) {
    t.match(problem(Activity, bad), { code: 'INVALID_LIMIT' }, bad)
  }
  for (const bad of ['skip=', 'skip=1.5', 'skip=100001', 'skip=%201']) {
    t.match(problem(Activity, bad), { code: 'INVALID_SKIP' }, bad)
  }
  for (const bad of ['count=', 'count=TRUE', 'count=1', 'count']) {
    t.match(problem(Activity, bad), { code: 'INVALID_COUNT' }, bad)
  }
})

t.test('sort', async (t) => {
  t.same(ok(Session, 'sort=%2Bname,-createdAt').sort, { name: 1, createdAt: -1, _id: 1 })
  t.same(ok(Session, 'sort=+name,-start').sort, { name: 1, start: -1, _id: 1 },
    'a raw + arrives as a space and counts as +')
  t.same(ok(Session, 'sort=-_id').sort, { _id: -1 }, '_id chosen by the client is not repeated')
  t.same(ok(Session, 'sort=-start,%2B_id,-name').sort, { start: -1, _id: 1, name: -1 })
  t.same(ok(Registration, 'sort=-customFields.ticket').sort, { 'customFields.ticket': -1, _id: 1 })
  t.same(ok(Session, '').sort, { _id: 1 }, 'default order: _id ascending')
  t.match(problem(Session, 'sort='), { code: 'INVALID_SORT', pointer: '/0' })
  t.match(problem(Session, 'sort=%2Bname,,-start'), { code: 'INVALID_SORT', pointer: '/1' })
  t.match(problem(Session, 'sort=%2Bactivity.name'), { code: 'INVALID_SORT', message: /related/ })
  t.match(problem(Session, 'sort=-project'), { code: 'INVALID_SORT', message: /fixed by the URL path/ })
  t.match(problem(Session, 'sort=%2Bnmae'), { code: 'INVALID_SORT', message: /did you mean 'name'/ })
  t.match(problem(Registration, 'sort=%2BsessionsSubscriptions.session'), { code: 'INVALID_SORT', message: /array/ })
  t.match(problem(Session, 'sort=*name'), { code: 'INVALID_SORT', pointer: '/0' })
})

t.test('messages that teach: a sort key without its sign that names no field says both; ' +
  'a pattern between slashes is refused with the MongoDB form', async (t) => {
  const problems = (query: string) => {
    const result = compileFor(Activity, query)
    return result.ok ? [] : result.problems
  }
  const [sort] = problems('sort=nmae')
  t.match(sort, { param: 'sort', pointer: '/0', code: 'INVALID_SORT' })
  t.match(sort?.message,
    /needs a direction: \+nmae .* or -nmae .*; and unknown field 'nmae' in sort; did you mean 'name'\?/)
  t.notMatch(problems('sort=name')[0]?.message, /unknown field/, 'a known field only lacks its sign')
  const regex = (pattern: string, options?: string) => {
    const name = options === undefined ? { $regex: pattern } : { $regex: pattern, $options: options }
    return problems(`filter=${encodeURIComponent(JSON.stringify({ name }))}`)
  }
  const [slashes] = regex('/yoga/i')
  t.match(slashes, { param: 'filter', pointer: '/name/$regex', code: 'INVALID_REGEX' })
  t.ok(slashes?.message.includes('{"$regex":"yoga","$options":"i"}'), slashes?.message)
  t.ok(regex('/yoga/', 'm')[0]?.message.includes('{"$regex":"yoga","$options":"m"}'), 'options given beside are kept')
  t.ok(regex('/yoga/')[0]?.message.includes('{"$regex":"yoga"}'))
  t.same(regex('/a/b/'), [], 'a slash inside: taken as it is')
  t.same(regex('/path'), [], 'no closing slash: taken as it is')
  t.same(regex('a/b'), [])
})
