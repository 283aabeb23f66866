import SwaggerParser from '@apidevtools/swagger-parser'
import t from 'tap'
import { build } from '../helpers/build.js'
import { buildWithDemoData } from '../helpers/demo-app.js'
import { ALL_LISTS, NESTED_LISTS, listRoutes } from '../helpers/lists.js'

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
  for (const collection of NESTED_LISTS) {
    t.ok(paths.includes(`/projects/{projectId}/${collection}`), collection)
  }
  t.ok(paths.includes('/projects') && paths.includes('/projects/public'))
  const sessions = document.paths['/projects/{projectId}/sessions'].get
  t.match(sessions.description,
    /\| `start` \| date \| `\$eq` `\$ne` `\$gt` `\$gte` `\$lt` `\$lte` `\$in` `\$nin` `\$exists` \| yes \|/)
  t.match(sessions.description,
    /\| `places` \| ObjectId\[\] \| `\$eq` `\$ne` `\$in` `\$nin` `\$exists` `\$all` `\$size` `\$elemMatch` \| no \|/)
  t.notMatch(sessions.description, /\| `project` \|/, 'the scope field is not offered')
  const parameter = (name: string) => sessions.parameters.find((p: { name: string }) => p.name === name)
  t.equal(parameter('limit').schema.maximum, 250, 'limit bound from MAX_LIMIT')
  t.equal(parameter('projectId').in, 'path')
  t.match(JSON.stringify(parameter('filter')), /\$gte/, 'a filter example')
  t.same(Object.keys(sessions.responses).sort(), ['200', '304', '400', '404', '412', '500', '503', 'default'])
  t.ok(sessions.responses['400'].content['application/problem+json'], 'errors as problem+json')
  t.match(JSON.stringify(sessions.responses['200']), /#\/components\/schemas\/Session/)
  t.equal(document.components.schemas.Session.properties.start['x-field-kind'], 'date')
})

t.test('what a reader sees is right: version, error examples, path parameter first, ' +
  'customFields.<name>', async (t) => {
  const { PACKAGE } = await import('../../lib/package-info.js')
  const { ERROR_CODES } = await import('../../schemas/problem.js')
  const fastify = await build(t)
  const document = (await fastify.inject('/docs/json')).json()
  t.equal(document.info.version, PACKAGE.version, 'info.version is package.json\'s')
  let examples = 0
  for (const [url, item] of Object.entries(document.paths as Record<string, Record<string, {
    parameters?: Array<{ in: string }>
    responses: Record<string, { content?: Record<string, { example?: { status: number, code: string } }> }>
  }>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (url.includes('{')) {
        t.equal(operation.parameters?.[0]?.in, 'path', `${method} ${url}: the path parameter comes first`)
      }
      if (method === 'head') {
        t.same(Object.keys(operation.responses), Object.keys(item.get?.responses ?? {}),
          `HEAD ${url} answers as GET does`)
        t.notOk(Object.values(operation.responses).some((response) => response.content !== undefined),
          `HEAD ${url}: headers only`)
        continue
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        const example = response.content?.['application/problem+json']?.example
        if (Number(status) < 400) continue
        t.ok(example !== undefined, `${method} ${url} ${status} has an example`)
        if (example === undefined) continue
        examples++
        // `default` stands for the statuses not listed: its example is one of them.
        if (status === 'default') {
          t.ok(example.status >= 400 && operation.responses[String(example.status)] === undefined,
            `${method} ${url} default: the example shows a status not listed`)
        } else {
          t.equal(example.status, Number(status), `${method} ${url} ${status}: the example shows its own status`)
        }
        t.ok((ERROR_CODES as readonly string[]).includes(example.code), `${example.code} is a code of the contract`)
      }
    }
  }
  t.ok(examples > 20)
  const sessions = document.paths['/projects/{projectId}/sessions'].get
  t.match(sessions.parameters[0].schema?.examples ?? sessions.parameters[0].examples ?? sessions.parameters[0].example,
    /65cd7e30/, 'the path parameter has an example id')
  t.match(document.components.schemas.Session.properties.customFields.description, /`customFields\.<name>`/,
    'in code, so that Markdown does not take <name> for HTML')
})

t.test('the error examples are what the service sends, and each list\'s bracket example is its own', async (t) => {
  const { buildWithDemoData, projectIds } = await import('../helpers/demo-app.js')
  const { BAD_REQUEST_EXAMPLE, UNKNOWN_PROJECT_EXAMPLE } = await import('../../list-endpoint/list-problems.js')
  const fastify = await buildWithDemoData(t)
  const { publicIds } = await projectIds(fastify)
  const document = (await fastify.inject('/docs/json')).json()
  t.equal(document.components.securitySchemes, undefined, 'no "Authorize" button while AUTH_MODE is not jwt')
  const withoutId = ({ requestId: _id, ...body }: { requestId?: string }) => body
  let lists = 0
  for (const [template, item] of Object.entries(document.paths as Record<string, {
    get?: {
      description?: string
      responses: Record<string, { content: Record<string, { example: { requestId?: string } }> }>
    }
  }>)) {
    const operation = item.get
    if (operation?.responses['400'] === undefined || template.startsWith('/docs')) continue
    lists++
    const url = template.replace('{projectId}', publicIds[0] as string)
    const documented = (status: string) =>
      withoutId(operation.responses[status]?.content['application/problem+json']?.example ?? {})
    const bad = await fastify.inject(`${url}?${BAD_REQUEST_EXAMPLE}`)
    t.equal(bad.statusCode, 400)
    t.same(withoutId(bad.json()), documented('400'), `${template}: the 400 example is its real answer`)
    if (template.includes('{projectId}')) {
      // A list's counts need their `by` (by=name: every kind has names).
      const missing = await fastify.inject(`${template.replace('{projectId}', UNKNOWN_PROJECT_EXAMPLE)}` +
        `${template.endsWith('/counts') ? '?by=name' : ''}`)
      t.same(withoutId(missing.json()), documented('404'), `${template}: the 404 example is its real answer`)
    }
    const bracket = /brackets \(`([^`]+)`\)/.exec(operation.description ?? '')?.[1]
    t.ok(bracket, `${template} shows a bracket example`)
    const res = await fastify.inject(`${url}?${bracket ?? ''}`)
    t.equal(res.statusCode, 200, `${template}: ${bracket ?? ''} is accepted`)
  }
  t.ok(lists >= 9, 'every list was checked')
})

t.test('"Authorize" shows when tokens are required', async (t) => {
  const { jwtConfig, makeKey } = await import('../helpers/tokens.js')
  const fastify = await build(t, {
    config: jwtConfig(makeKey('k', 'ES256'))
  })
  const document = (await fastify.inject('/docs/json')).json()
  t.ok(document.components.securitySchemes.bearerAuth)
  const example = document.paths['/projects/{projectId}/sessions'].get.responses['401']
    .content['application/problem+json'].example
  const res = await fastify.inject('/projects/65cd7e3007370d3300000000/sessions')
  t.equal(res.statusCode, 401)
  const { requestId: _sent, ...body } = res.json()
  const { requestId: _shown, ...shown } = example
  t.same(body, shown, 'the 401 example is the real answer')
})

t.test('each list\'s 200 example is the service\'s own answer on the demo data, ' +
  'not one made up from the schema', async (t) => {
  const heard = listRoutes()
  const fastify = await buildWithDemoData(t, { onRoute: heard.onRoute })
  const document = (await fastify.inject('/docs/json')).json()
  const project = '65cd7e3007370d3300000000'
  const lists = Object.entries(document.paths as Record<string, {
    get: { responses: { 200: { content: Record<string, { example?: { data: Array<{ _id: string }> } }> } } }
  }>).filter(([url]) => url.startsWith('/projects') && !url.endsWith('/changes') && !url.endsWith('/counts'))
  t.ok(heard.routes.length >= ALL_LISTS.length, `${heard.routes.length} lists registered`)
  t.equal(lists.length, heard.routes.length, 'a path for every list the app registers')
  for (const [url, item] of lists) {
    const example = item.get.responses[200].content['application/json']?.example
    t.ok(example, `${url} has an example`)
    if (example === undefined) continue
    const id = example.data[0]?._id as string
    const res = await fastify.inject(`${url.replace('{projectId}', project)}` +
      `?filter=${encodeURIComponent(JSON.stringify({ _id: id }))}`)
    t.same(res.json(), example, `${url}: the answer to filter={"_id":"${id}"}`)
  }
})
