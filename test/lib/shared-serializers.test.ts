// A response schema's serializer is compiled once and reused for every route that has the same
// schema; a different schema, or the same one among other shared schemas, gets its own.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import t from 'tap'
import { sharedSerializers } from '../../lib/shared-serializers.js'

const problem = () => ({ type: 'object', properties: { code: { type: 'string' }, status: { type: 'integer' } } })
const route = (url: string, httpStatus: string, schema: unknown) => ({ method: 'GET', url, httpStatus, schema })

t.test('the same schema (another object, the same JSON) on two routes: one serializer', async (t) => {
  const compile = sharedSerializers()({}, {})
  const first = compile(route('/projects/:projectId/sessions', '500', problem()))
  t.equal(compile(route('/projects/:projectId/teams', '500', problem())), first, 'reused')
  t.not(compile(route('/projects', '500', { ...problem(), required: ['code'] })), first,
    'a different schema is compiled')
})

t.test('what the shared serializer writes is what Fastify\'s own writes', async (t) => {
  const schema = {
    type: 'object',
    properties: { code: { type: 'string' }, status: { type: 'integer' }, when: { type: 'string', format: 'date-time' } }
  }
  const value = { code: 'QUERY_TIMEOUT', status: 503, when: new Date(0), extra: 'left out' }
  const shared = sharedSerializers()({}, {})(route('/a', '503', schema))
  const stock = SerializerSelector()({}, {})(route('/a', '503', schema))
  t.equal(shared(value), stock(value))
  t.same(JSON.parse(shared(value)), { code: 'QUERY_TIMEOUT', status: 503, when: '1970-01-01T00:00:00.000Z' })
})

t.test('the stock compiler\'s serializer depends on the schema alone, not on the route (what sharing assumes)',
  async (t) => {
    const schema = problem()
    const value = { code: 'PROJECT_NOT_FOUND', status: 404, extra: 'left out' }
    const stock = SerializerSelector()({}, {})
    const written = [
      route('/projects/:projectId/sessions', '404', schema), { ...route('/a', '503', schema), method: 'HEAD' }
    ].map((asked) => stock(asked)(value))
    t.equal(written[0], written[1])
    t.equal(written[0], '{"code":"PROJECT_NOT_FOUND","status":404}')
  })

t.test('each set of shared schemas has serializers of its own', async (t) => {
  const factory = sharedSerializers()
  const schema = { $ref: 'Thing#' }
  const asString = factory({
    Thing: { $id: 'Thing', type: 'object', properties: { n: { type: 'string' } } }
  }, {})(route('/a', '200', schema))
  const asNumber = factory({
    Thing: { $id: 'Thing', type: 'object', properties: { n: { type: 'integer' } } }
  }, {})(route('/a', '200', schema))
  t.equal(asString({ n: 1 }), '{"n":"1"}')
  t.equal(asNumber({ n: 1 }), '{"n":1}')
})
