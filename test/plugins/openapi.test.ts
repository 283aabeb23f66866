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
