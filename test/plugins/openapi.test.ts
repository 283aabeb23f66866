import SwaggerParser from '@apidevtools/swagger-parser'
import t from 'tap'
import { build } from '../helpers/build.js'

t.test('GET /docs/json is a valid OpenAPI 3 document', async (t) => {
  const fastify = await build(t)
  const res = await fastify.inject('/docs/json')
  t.equal(res.statusCode, 200)
  const document = res.json()
  t.match(document.openapi, /^3\./)
  await t.resolves(SwaggerParser.validate(structuredClone(document)), 'the OpenAPI validator accepts it')
  t.ok(document.paths['/health'], 'routes are documented')
  t.ok(document.components.schemas.Problem, 'the problem+json schema is a named component')
})

t.test('GET /docs serves Swagger UI', async (t) => {
  const fastify = await build(t)
  const res = await fastify.inject('/docs/')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/html/)
  t.match(res.body, /swagger-ui/i)
})

t.test('each list documents its fields, operators, bounds and answers, from the schemas', async (t) => {
  const fastify = await build(t, { config: { MAX_LIMIT: 250 } })
  const document = (await fastify.inject('/docs/json')).json()
  const paths = Object.keys(document.paths)
  for (const collection of ['activities', 'categories', 'places', 'sessions', 'stewards', 'teams', 'registrations']) {
    t.ok(paths.includes(`/projects/{projectId}/${collection}`), collection)
  }
  t.ok(paths.includes('/projects') && paths.includes('/projects/public'))
  const sessions = document.paths['/projects/{projectId}/sessions'].get
  t.match(sessions.description, /\| `start` \| date \| `\$eq` `\$ne` `\$gt` `\$gte` `\$lt` `\$lte` `\$in` `\$nin` `\$exists` \| yes \|/)
  t.match(sessions.description, /\| `places` \| ObjectId\[\] \| `\$eq` `\$ne` `\$in` `\$nin` `\$exists` `\$all` `\$size` \| no \|/)
  t.notMatch(sessions.description, /\| `project` \|/, 'the scope field is not offered')
  const parameter = (name: string) => sessions.parameters.find((p: { name: string }) => p.name === name)
  t.equal(parameter('limit').schema.maximum, 250, 'limit bound from MAX_LIMIT')
  t.equal(parameter('projectId').in, 'path')
  t.match(JSON.stringify(parameter('filter')), /\$gte/, 'a filter example')
  t.same(Object.keys(sessions.responses).sort(), ['200', '400', '404', '500', '503'])
  t.ok(sessions.responses['400'].content['application/problem+json'], 'errors as problem+json')
  t.match(JSON.stringify(sessions.responses['200']), /#\/components\/schemas\/Session/)
  t.equal(document.components.schemas.Session.properties.start['x-field-kind'], 'date')
})
