// The classes of the hostile-input report, over HTTP on the demo data: each is a 4xx
// problem+json with a precise code and pointer, and the database receives no command.
import net from 'node:net'
import t from 'tap'
import { buildWithDemoData, projectIds, q } from '../helpers/demo-app.js'
import { watchCommands } from '../helpers/commands.js'

const fastify = await buildWithDemoData(t)
const { publicIds } = await projectIds(fastify)
const sessions = `/projects/${publicIds[0] as string}/sessions`
const commands = watchCommands(fastify)

type Case = [string, string, number, string, string]
// [what, raw query string, status, code, pointer]
const filterCases: Case[] = [
  ['a quantifier bound over 65535', q({ name: { $regex: 'a{65536}' } }), 400, 'INVALID_REGEX', '/name/$regex'],
  ['a \\u escape', q({ name: { $regex: '\\u0041' } }), 400, 'INVALID_REGEX', '/name/$regex'],
  ['an empty class', q({ name: { $regex: 'a[]b' } }), 400, 'INVALID_REGEX', '/name/$regex'],
  ['[^]', q({ name: { $regex: '[^]' } }), 400, 'INVALID_REGEX', '/name/$regex'],
  ['a back-reference to a missing group', q({ name: { $regex: '(a)\\2' } }), 400, 'INVALID_REGEX', '/name/$regex'],
  ['a variable-length lookbehind', q({ name: { $regex: '(?<=a+)b' } }), 400, 'INVALID_REGEX', '/name/$regex'],
  ['a group name PCRE2 refuses', q({ name: { $regex: '(?<a$b>x)' } }), 400, 'INVALID_REGEX', '/name/$regex'],
  ['a NUL character', q({ name: { $regex: 'a\u0000b' } }), 400, 'INVALID_REGEX', '/name/$regex'],
  ['a regex in bracket notation', 'filter[name][$regex]=a%7B70000%7D', 400, 'INVALID_REGEX', '/name/$regex'],
  ['alternatives that overlap', q({ name: { $regex: '^(a|aa)+$' } }), 400, 'UNSAFE_REGEX', '/name/$regex'],
  ['\\w or \\d, repeated', q({ name: { $regex: '(\\w|\\d)+$' } }), 400, 'UNSAFE_REGEX', '/name/$regex'],
  ['(.|.)*', q({ name: { $regex: '(.|.)*z' } }), 400, 'UNSAFE_REGEX', '/name/$regex'],
  ['.* side by side', q({ name: { $regex: '.*.*.*.*.*=.*' } }), 400, 'UNSAFE_REGEX', '/name/$regex'],
  ['a counted group of .*', q({ name: { $regex: '(.*a){20}' } }), 400, 'UNSAFE_REGEX', '/name/$regex'],
  ['optional items in a row that share characters', q({ name: { $regex: `${'a?'.repeat(30)}${'a'.repeat(30)}` } }),
    400, 'UNSAFE_REGEX', '/name/$regex'],
  ['an ambiguity only the i option creates', q({ name: { $regex: '^(a|A)+$', $options: 'i' } }),
    400, 'UNSAFE_REGEX', '/name/$regex'],
  ['a lone surrogate in a value', 'filter=%7B%22name%22%3A%22%5Cud800%22%7D', 400, 'INVALID_VALUE', '/name'],
  ['a lone surrogate inside $in', 'filter=%7B%22name%22%3A%7B%22%24in%22%3A%5B%22a%22%2C%22%5Cudfff%22%5D%7D%7D',
    400, 'INVALID_VALUE', '/name/$in/1'],
  ['an integer beyond 2^53', `filter=${encodeURIComponent('{"customFields.n":9007199254740993}')}`,
    400, 'INVALID_VALUE', '/customFields.n'],
  ['the same integer in exponent form', `filter=${encodeURIComponent('{"customFields.n":9.007199254740993e15}')}`,
    400, 'INVALID_VALUE', '/customFields.n'],
  ['customFields.__proto__', q({ 'customFields.__proto__': 'x' }), 400, 'UNKNOWN_FIELD', '/customFields.__proto__'],
  ['customFields.constructor', q({ 'customFields.constructor': { $exists: true } }),
    400, 'UNKNOWN_FIELD', '/customFields.constructor'],
  ['prototype as a bracket segment', 'filter[customFields.prototype]=x',
    400, 'UNKNOWN_FIELD', '/customFields.prototype'],
  ['__proto__ in sort', 'sort=-customFields.__proto__', 400, 'INVALID_SORT', '/0']
]

t.test('every hostile filter is a 400 problem with its code and pointer, and runs no command', async (t) => {
  t.ok((await fastify.inject(`${sessions}?limit=1`)).statusCode === 200 && commands.names().length > 0,
    'the watch sees the queries of a valid request')
  for (const [what, query, status, code, pointer] of filterCases) {
    const res = await fastify.inject(`${sessions}?${query}`)
    t.equal(res.statusCode, status, `${what}: status`)
    if (status !== 400) continue
    t.match(res.headers['content-type'], /^application\/problem\+json/, `${what}: problem+json`)
    t.match(res.json(), { status, code, errors: [{ code, pointer }], requestId: String }, `${what}: code and pointer`)
    t.same(commands.names(), [], `${what}: no database command`)
  }
})

t.test('a bracket number is judged by its text as well', async (t) => {
  const places = `/projects/${publicIds[0] as string}/places`
  const res = await fastify.inject(`${places}?filter[maxNumberOfParticipants][$gt]=9007199254740993`)
  t.equal(res.statusCode, 400)
  t.match(res.json(), { code: 'INVALID_VALUE', errors: [{ pointer: '/maxNumberOfParticipants/$gt' }] })
  t.equal((await fastify.inject(`${places}?filter[maxNumberOfParticipants][$gt]=9007199254740992`)).statusCode, 200)
  t.same(commands.names().filter((name) => name !== 'find' && name !== 'findOne'), [])
})

t.test('the exact limits are still accepted', async (t) => {
  for (const query of [
    q({ 'customFields.n': 9007199254740992 }), q({ 'customFields.n': -9007199254740992 }), q({ 'customFields.n': 0.1 }),
    q({ name: { $regex: 'a{65535}' } }), q({ name: { $regex: '\\x{263A}|caf\\xe9' } }),
    q({ name: { $regex: '^(\\d+,)*\\d+$' } }), q({ name: '\ud83d\ude00' })
  ]) {
    const res = await fastify.inject(`${sessions}?${query}`)
    t.equal(res.statusCode, 200, decodeURIComponent(query))
  }
})

t.test('errors raised before a route runs are problem+json too', async (t) => {
  commands.names() // what earlier tests ran
  const check = async (what: string, res: { statusCode: number, headers: Record<string, unknown>, json: () => any },
    status: number, code: string) => {
    t.equal(res.statusCode, status, `${what}: status`)
    t.match(res.headers['content-type'], /^application\/problem\+json/, `${what}: problem+json`)
    t.match(res.json(), { status, code, errors: [{ code }], requestId: String }, `${what}: body`)
    t.equal(res.headers['x-request-id'], res.json().requestId, `${what}: X-Request-Id is the body's requestId`)
    t.same(commands.names(), [], `${what}: no database command`)
  }
  await check('an overlong project id',
    await fastify.inject(`/projects/${'a'.repeat(200)}/sessions`), 414, 'URI_TOO_LONG')
  await check('broken percent-encoding in the path',
    await fastify.inject('/projects/%E0%A4%A/sessions'), 400, 'BAD_REQUEST')
  await check('an unknown route', await fastify.inject('/nowhere'), 404, 'NOT_FOUND')
  const post = await fastify.inject({ method: 'POST', url: sessions, payload: { a: 1 } })
  await check('POST on a list', post, 405, 'METHOD_NOT_ALLOWED')
  t.equal(post.headers.allow, 'GET, HEAD')
  await check('DELETE on /projects',
    await fastify.inject({ method: 'DELETE', url: '/projects' }), 405, 'METHOD_NOT_ALLOWED')
  for (const url of ['/', '/health', '/ready', '/docs', '/docs/json', '/docs/yaml']) {
    for (const method of ['POST', 'DELETE'] as const) {
      const res = await fastify.inject({ method, url, payload: method === 'POST' ? { a: 1 } : undefined })
      await check(`${method} ${url}`, res, 405, 'METHOD_NOT_ALLOWED')
      t.equal(res.headers.allow, 'GET, HEAD', `${method} ${url}: Allow`)
    }
    t.equal((await fastify.inject(url)).statusCode, 200, `GET ${url} still answers`)
  }
  await check('PUT on a list, its project id malformed',
    await fastify.inject({ method: 'PUT', url: '/projects/not-an-id/sessions' }), 405, 'METHOD_NOT_ALLOWED')
  await check('the same with GET', await fastify.inject('/projects/not-an-id/sessions'), 400, 'INVALID_PROJECT_ID')
  const { METHODS } = await import('node:http')
  for (const method of METHODS.filter((m) => !['GET', 'HEAD', 'CONNECT'].includes(m))) {
    const res = await fastify.inject({ method: method as 'GET', url: sessions })
    t.equal(`${method} ${res.statusCode} ${String(res.headers.allow)}`, `${method} 405 GET, HEAD`,
      `${method} on a list: 405 with Allow`)
  }
  commands.names()
  await check('a GET with a body', await fastify.inject({
    method: 'GET', url: sessions, headers: { 'content-type': 'text/plain' }, payload: 'x'
  }), 400, 'BAD_REQUEST')
  const head = await fastify.inject({ method: 'HEAD', url: `${sessions}?limit=1` })
  t.equal(head.statusCode, 200, 'HEAD answers like GET')
  t.equal(head.body, '', 'without a body')
  commands.names()
})

t.test('a MongoDB refusal of the query is a 400 with the matching code, never a 5xx', async (t) => {
  const app = await buildWithDemoData(t, {
    extend: (app) => app.get('/test/raw-regex', async () =>
      await app.mongo.db?.collection('sessions').find({ name: { $regex: '(', $options: 'z' } }).toArray())
  })
  const res = await app.inject('/test/raw-regex')
  t.equal(res.statusCode, 400)
  t.match(res.json(), { code: /^INVALID_REGEX/, errors: [{ param: 'filter' }] })
})

t.test('what the HTTP parser of Node refuses is problem+json on a real socket', async (t) => {
  commands.names()
  const address = await fastify.listen({ port: 0, host: '127.0.0.1' })
  const huge = await fetch(`${address}${sessions}?${q({ name: 'x'.repeat(100_000) })}`)
  t.equal(huge.status, 431, 'an oversized URL')
  t.match(huge.headers.get('content-type'), /^application\/problem\+json/)
  const hugeBody = await huge.json() as { requestId: string }
  t.match(hugeBody,
    { status: 431, code: 'HEADERS_TOO_LARGE', errors: [{ code: 'HEADERS_TOO_LARGE' }], requestId: String })
  t.equal(huge.headers.get('x-request-id'), hugeBody.requestId, 'the X-Request-Id header is the body\'s requestId')

  // `open`: the request is written without ending the socket (Node drops a half-closed client's
  // answer that is still being read); the answer ends when the server closes.
  const raw = async (
    request: string, { open = false } = {}
  ): Promise<string> => await new Promise((resolve, reject) => {
    const url = new URL(address)
    const socket = net.connect(Number(url.port), url.hostname, () => open ? socket.write(request) : socket.end(request))
    let answer = ''
    socket.setEncoding('utf8').on('data', (chunk: string) => { answer += chunk }).on('end', () => resolve(answer))
      .on('error', reject)
  })
  const smuggled = await raw(`GET ${sessions} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n` +
    'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n')
  t.match(smuggled, /^HTTP\/1\.1 400 /, 'Content-Length with Transfer-Encoding: 400')
  t.match(smuggled, /application\/problem\+json[\s\S]*"code":"BAD_REQUEST"/)
  t.equal(/^x-request-id: (.+)$/im.exec(smuggled)?.[1]?.trim(), /"requestId":"([^"]+)"/.exec(smuggled)?.[1],
    'its X-Request-Id header is its body\'s requestId')
  const garbage = await raw('NOT HTTP AT ALL\r\n\r\n')
  t.match(garbage, /^HTTP\/1\.1 400 [\s\S]*"code":"BAD_REQUEST"/, 'a request that is not HTTP')
  // What Node's server would answer itself, with no body or no answer at all.
  const noHost = await raw(`GET ${sessions} HTTP/1.1\r\n\r\n`)
  t.match(noHost, /^HTTP\/1\.1 400 [\s\S]*application\/problem\+json[\s\S]*"code":"BAD_REQUEST"/,
    'an HTTP/1.1 request without Host')
  // RFC 9112, 3.2: a Host that is no host and port, or two Host lines, is 400 (valid ones below).
  for (const host of ['a b', 'a/b', 'x:8o', 'a@b', 'x\r\nHost: y']) {
    t.match(await raw(`GET ${sessions}?limit=1 HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
      /^HTTP\/1\.1 400 [\s\S]*"code":"BAD_REQUEST"[\s\S]*"param":"host"/, `Host: ${JSON.stringify(host)}: 400`)
  }
  t.match(await raw('GET * HTTP/1.1\r\nHost: x\r\n\r\n'), /^HTTP\/1\.1 400 [\s\S]*"code":"BAD_REQUEST"/,
    'GET *: the asterisk form is for OPTIONS')
  t.match(await raw('HEAD * HTTP/1.1\r\nHost: x\r\n\r\n'), /^HTTP\/1\.1 400 /, 'HEAD * too')
  const expectation = await raw(`GET ${sessions} HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n` +
    'X-Request-Id: client-7\r\n\r\n')
  t.match(expectation, /^HTTP\/1\.1 417 [\s\S]*application\/problem\+json[\s\S]*"code":"BAD_REQUEST"/,
    'an expectation other than 100-continue')
  t.equal(/^x-request-id: (.+)$/im.exec(expectation)?.[1]?.trim(), 'client-7', 'the request\'s own id, kept')
  t.equal(/"requestId":"([^"]+)"/.exec(expectation)?.[1], 'client-7')
  const tunnel = await raw(`CONNECT ${sessions} HTTP/1.1\r\nHost: x\r\n\r\n`)
  t.match(tunnel, /^HTTP\/1\.1 405 [\s\S]*Allow: GET, HEAD[\s\S]*"code":"METHOD_NOT_ALLOWED"/, 'CONNECT')
  t.same(commands.names(), [], 'no database command')
  t.match(await raw(`GET ${sessions}?limit=1 HTTP/1.0\r\n\r\n`, { open: true }), /^HTTP\/1\.1 200 /,
    'HTTP/1.0 needs no Host')
  for (const host of ['[::1]:3000', 'Example.COM:', '127.0.0.1:80', 'xn--bcher-kva.example', '']) {
    t.match(await raw(`GET ${sessions}?limit=1 HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`, { open: true }),
      /^HTTP\/1\.1 200 /, `Host: ${JSON.stringify(host)}: 200`)
  }
})
