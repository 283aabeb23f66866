// request.query parsed on first read: whatever a reader does with it, it sees what the router's
// default parser (fast-querystring) gives, and a route that validates its query still can.
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import querystring from 'fast-querystring'
import Fastify from 'fastify'
import t from 'tap'
import { lazyQuery } from '../../lib/lazy-query.js'

const text = fc.oneof(
  fc.string(),
  fc.array(fc.tuple(fc.constantFrom('a', 'b', 'filter', '__proto__', 'constructor', 'x y', '%41', ''), fc.string()),
    { maxLength: 5 })
    .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')),
  fc.constantFrom('a=1&a=2&a=3', 'a&b=&=c', 'x=%ZZ&y=%2', 'q=a+b%20c', '&&&', '=')
)

/** Everything a reader can observe of a query object, in one value. */
function observed (query: Record<string, unknown>): unknown {
  const keys = Reflect.ownKeys(query)
  return {
    keys,
    json: JSON.stringify(query),
    values: keys.map((key) => query[key as string]),
    descriptors: keys.map((key) => Object.getOwnPropertyDescriptor(query, key)),
    has: ['a', 'b', 'toString', '__proto__'].map((key) => key in query),
    prototype: Object.getPrototypeOf(Object.getPrototypeOf(query)),
    spread: { ...query },
    extensible: Object.isExtensible(query)
  }
}

t.test('reads as the default parser gives, and not before it is read', async (t) => {
  let runs = 0
  t.doesNotThrow(() => fc.assert(fc.property(text, (input) => {
    runs++
    const expected = input.length === 0 ? {} : querystring.parse(input)
    if (!isDeepStrictEqual(observed(lazyQuery(input)), observed(expected))) {
      throw new Error(`differs on ${JSON.stringify(input)}`)
    }
  }), { numRuns: 2000, seed: 3 }))
  t.equal(runs, 2000)
})

t.test('written, deleted and frozen as the parsed object would be', async (t) => {
  const lazy = lazyQuery('a=1&b=2')
  const plain = querystring.parse('a=1&b=2')
  for (const query of [lazy, plain]) {
    query.c = 3
    delete query.a
    Object.defineProperty(query, 'd', { value: 4, enumerable: false })
    Object.freeze(query)
  }
  t.same(observed(lazy), observed(plain))
  t.ok(Object.isFrozen(lazy))
  t.throws(() => { (lazy as Record<string, unknown>).e = 5 }, TypeError, 'a frozen query refuses new keys')
})

t.test('a route that validates its query string gets it parsed and checked', async (t) => {
  const fastify = Fastify({ routerOptions: { querystringParser: lazyQuery } })
  t.teardown(() => fastify.close())
  fastify.get('/', {
    schema: {
      querystring: {
        type: 'object',
        properties: { n: { type: 'integer' }, tag: { type: 'array', items: { type: 'string' } } },
        required: ['n']
      }
    }
  }, async (request) => request.query)
  const ok = await fastify.inject('/?n=5&tag=x&tag=y')
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { n: 5, tag: ['x', 'y'] }, "coerced by Fastify's validator, as a parsed query is")
  const bad = await fastify.inject('/?tag=x')
  t.equal(bad.statusCode, 400, 'a missing key is seen missing')
})
