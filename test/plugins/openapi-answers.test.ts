// The OpenAPI document lists every answer the service gives: each status an operation sends is
// one of its responses (or its `default`), with the headers that come with it.
import net from 'node:net'
import type { LightMyRequestResponse } from 'fastify'
import SwaggerParser from '@apidevtools/swagger-parser'
import t from 'tap'
import { buildWithDemoData } from '../helpers/demo-app.js'
import { jwtConfig, makeKey, mint } from '../helpers/tokens.js'

interface Response { headers?: Record<string, unknown>, content?: Record<string, unknown> }
type Document = { paths: Record<string, Record<string, { responses: Record<string, Response> }>> }

// The headers of the API's own answers; transport headers (date, connection, …) are HTTP's.
const API_HEADERS = /^(etag|cache-control|link|retry-after|ratelimit-.*|www-authenticate)$/

/** The problems found in how `document` describes `res`, the answer to `method path`. */
function undocumented (document: Document, method: string, path: string, res: LightMyRequestResponse): string[] {
  const operation = document.paths[path]?.[method]
  if (operation === undefined) return [`${method} ${path}: no such operation`]
  const status = String(res.statusCode)
  const response = operation.responses[status] ?? operation.responses.default
  if (response === undefined) return [`${method} ${path}: ${status} is not listed`]
  const problems: string[] = []
  if (operation.responses[status] === undefined && res.statusCode < 400) {
    problems.push(`${method} ${path}: ${status} only under default`)
  }
  for (const name of Object.keys(res.headers)) {
    if (API_HEADERS.test(name) && response.headers?.[name] === undefined) {
      problems.push(`${method} ${path} ${status}: header ${name} not listed`)
    }
  }
  const type = String(res.headers['content-type'] ?? '').split(';')[0] as string
  if (method === 'get' && res.body.length > 0 && response.content?.[type] === undefined) {
    problems.push(`${method} ${path} ${status}: ${type} not listed`)
  }
  return problems
}

t.test('lists and counts: 200 with its validator, 304, 429 with the rate limit\'s headers, 401, 503 ' +
  'and the HTTP layer\'s problems', async (t) => {
  const key = makeKey('answers', 'ES256')
  const fastify = await buildWithDemoData(t, {
    config: { RATE_LIMIT_PER_MINUTE: 3, ...jwtConfig(key) }
  })
  const document = (await fastify.inject('/docs/json')).json<Document>()
  await t.resolves(
    SwaggerParser.validate(structuredClone(document) as unknown as Parameters<typeof SwaggerParser.validate>[0]),
    'still a valid OpenAPI document')
  const authorization = `Bearer ${mint(key, { projects: '*', sub: 'answers' })}`
  const found: string[] = []
  const check = async (
    method: 'get' | 'head', url: string, path: string, headers: Record<string, string> = {}
  ): Promise<LightMyRequestResponse> => {
    const res = await fastify.inject({
      method: method.toUpperCase() as 'GET', url, headers: { authorization, ...headers }
    })
    found.push(...undocumented(document, method, path, res))
    const parameters = (document.paths[path]?.[method] as { parameters?: Array<{ in: string, name: string }> })
      .parameters ?? []
    for (const name of Object.keys(headers).filter((header) => header !== 'authorization')) {
      const listed = parameters.some((p) => p.in === 'header' && p.name === name)
      if (!listed) found.push(`${method} ${path}: ${name} not a parameter`)
    }
    return res
  }
  const list = await check('get', '/projects?limit=1', '/projects')
  t.equal(list.statusCode, 200)
  t.ok(list.headers.etag !== undefined && list.headers['ratelimit-remaining'] !== undefined,
    'the 200 carries a validator and the rate limit\'s headers')
  t.equal((await check('head', '/projects?limit=1', '/projects',
    { 'if-none-match': String(list.headers.etag) })).statusCode, 304)
  const counts = await check('get', '/projects/counts?by=name', '/projects/counts')
  t.equal((await check('get', '/projects/counts?by=name', '/projects/counts',
    { 'if-none-match': String(counts.headers.etag) })).statusCode, 304)
  t.equal((await check('get', '/projects/counts?by=name&limit=2', '/projects/counts')).statusCode, 200,
    'the third request the limit counts')
  t.equal((await check('get', '/projects/counts?by=name', '/projects/counts')).statusCode, 429,
    'the fourth: a 304 is given back (docs/conditional-requests.md)')
  t.equal((await check('get', '/projects?limit=1', '/projects', { authorization: 'Bearer x.y.z' })).statusCode, 401)
  t.same(found, [])
  // What Node's parser refuses never reaches a route: a real socket, and `default` describes it.
  const address = await fastify.listen({ port: 0, host: '127.0.0.1' })
  const head = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(new URL(address).port), '127.0.0.1', () => {
      socket.end(`GET /projects HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`)
    })
    let text = ''
    socket.on('data', (chunk) => { text += chunk.toString() }).on('end', () => { resolve(text) }).on('error', reject)
  })
  t.match(head, /^HTTP\/1\.1 431 [\s\S]*"code":"HEADERS_TOO_LARGE"/, 'URL and headers over 16 KiB')
  t.equal(document.paths['/projects']?.get?.responses['431'], undefined, 'not an operation\'s own answer')
  t.ok(document.paths['/projects']?.get?.responses.default?.content?.['application/problem+json'],
    'but its default problem')
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const { responses } = operation
      t.ok(responses.default?.content?.['application/problem+json'] !== undefined || method === 'head',
        `${method} ${path}: default is a problem`)
      if (responses['503'] !== undefined) {
        t.ok(responses['503'].headers?.['retry-after'], `${method} ${path}: 503 lists Retry-After`)
      }
      if (responses['401'] !== undefined) {
        t.ok(responses['401'].headers?.['www-authenticate'], `${method} ${path}: 401 lists WWW-Authenticate`)
      }
    }
  }
})

t.test('without a rate limit, no 429 is described; If-Match and its 412 are', async (t) => {
  const fastify = await buildWithDemoData(t)
  const document = (await fastify.inject('/docs/json')).json<Document>()
  const statuses = new Set(Object.values(document.paths).flatMap((item) =>
    Object.values(item).flatMap((operation) => Object.keys(operation.responses))))
  t.notOk(statuses.has('429'))
  t.ok(statuses.has('304'))
  const refused = await fastify.inject({ url: '/projects?limit=1', headers: { 'if-match': '"x"' } })
  t.equal(refused.statusCode, 412)
  t.same(undocumented(document, 'get', '/projects', refused), [], 'the 412 is described')
  const { parameters = [] } = document.paths['/projects']?.get as { parameters?: Array<{ in: string, name: string }> }
  t.ok(parameters.some((p) => p.in === 'header' && p.name === 'if-match'), 'If-Match is a parameter')
})
