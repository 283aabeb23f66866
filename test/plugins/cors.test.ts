// Browsers (CORS_ORIGINS): a preflight from an allowed origin is answered for GET and HEAD with
// Authorization, X-Request-Id and If-None-Match; answers expose the paging, validator, id and retry
// headers. Other origins get no CORS header, and with CORS_ORIGINS unset nothing of CORS is sent at all.
import t from 'tap'
import { readConfig } from '../../plugins/config.js'
import { buildWithDemoData } from '../helpers/demo-app.js'

const APP = 'https://planner.example.org'
const preflight = (origin: string, method = 'GET') => ({
  method: 'OPTIONS' as const,
  url: '/projects?limit=1',
  headers: {
    origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,x-request-id'
  }
})

t.test('allowed origins: preflight answered, headers exposed', async (t) => {
  const fastify = await buildWithDemoData(t,
    { config: { CORS_ORIGINS: `${APP}, http://localhost:5173`, AUTH_MODE: 'none' } })
  const pre = await fastify.inject(preflight(APP))
  t.equal(pre.statusCode, 204)
  t.equal(pre.headers['access-control-allow-origin'], APP)
  t.equal(pre.headers['access-control-allow-methods'], 'GET, HEAD')
  t.equal(pre.headers['access-control-allow-headers'], 'Authorization, X-Request-Id, If-None-Match')
  t.ok(Number(pre.headers['access-control-max-age']) > 0, 'browsers may cache it')
  t.match(String(pre.headers.vary), /Origin/)
  const nested = await fastify.inject({ ...preflight(APP), url: '/projects/65cd7e3007370d3300000000/sessions' })
  t.equal(nested.statusCode, 204, 'on nested lists too (no project lookup, no token)')

  const res = await fastify.inject({ url: '/projects?limit=1', headers: { origin: APP } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['access-control-allow-origin'], APP)
  const exposed = String(res.headers['access-control-expose-headers']).split(', ')
  for (const name of [
    'Link', 'ETag', 'X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'
  ]) t.ok(exposed.includes(name), `${name} exposed`)
  const problem = await fastify.inject({ url: '/projects?limit=x', headers: { origin: APP } })
  t.equal(problem.statusCode, 400)
  t.equal(problem.headers['access-control-allow-origin'], APP, 'a browser can read the problem too')
})

t.test('a refusal before the route is reached (shutting down) still carries CORS and the request id', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { CORS_ORIGINS: APP } })
  fastify.lifecycle.stopAccepting()
  const refused = await fastify.inject({
    url: '/projects?limit=1', headers: { origin: APP, 'x-request-id': 'browser-1' }
  })
  t.equal(refused.statusCode, 503)
  t.match(refused.json(), { code: 'OVERLOADED' })
  t.equal(refused.headers['access-control-allow-origin'], APP, 'a browser can read why')
  t.equal(refused.headers['x-request-id'], 'browser-1')
  const pre = await fastify.inject(preflight(APP))
  t.equal(pre.statusCode, 204, 'a preflight is still answered: the request it announces gets the 503 to read')
})

t.test('what the router refuses before any hook carries the CORS headers of every other answer', async (t) => {
  const CORS = ['access-control-allow-origin', 'access-control-expose-headers', 'vary']
  const corsOf = (headers: Record<string, unknown>) => Object.fromEntries(CORS.map((name) => [name, headers[name]]))
  for (const setting of [APP, '*']) {
    const fastify = await buildWithDemoData(t, { config: { CORS_ORIGINS: setting } })
    for (const origin of [APP, 'https://evil.example']) {
      // A route's own refusal: its headers are @fastify/cors's.
      const routed = await fastify.inject({ url: '/projects?limit=x', headers: { origin } })
      t.equal(routed.statusCode, 400)
      const refusals: Array<[string, string, number]> = [
        ['a path segment too long for the router', `/projects/${'a'.repeat(200)}/sessions`, 414],
        ['a bad percent-escape', '/projects/%zz/sessions', 400]
      ]
      for (const [what, url, status] of refusals) {
        const refused = await fastify.inject({ url, headers: { origin } })
        t.equal(refused.statusCode, status, what)
        t.match(refused.headers['content-type'], /problem\+json/)
        t.same(corsOf(refused.headers), corsOf(routed.headers), `${setting}, ${origin}, ${what}: as @fastify/cors's`)
      }
    }
    const granted = await fastify.inject({ url: '/projects/%zz/sessions', headers: { origin: APP } })
    t.equal(granted.headers['access-control-allow-origin'], setting === '*' ? '*' : APP, 'a browser reads why')
  }
  const off = await buildWithDemoData(t)
  const refused = await off.inject({ url: '/projects/%zz/sessions', headers: { origin: APP } })
  t.notOk(Object.keys(refused.headers).some((name) => name.startsWith('access-control-')), 'unset: none')
})

t.test('other origins, and OPTIONS that is not a preflight, get no CORS header', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { CORS_ORIGINS: APP } })
  const stranger = await fastify.inject(preflight('https://evil.example'))
  t.equal(stranger.headers['access-control-allow-origin'], undefined)
  t.equal(stranger.statusCode, 405, 'treated as the OPTIONS method it is')
  t.match(stranger.headers['content-type'], /problem\+json/)
  const plain = await fastify.inject({ method: 'OPTIONS', url: '/projects', headers: { origin: APP } })
  t.equal(plain.statusCode, 405, 'OPTIONS without Access-Control-Request-Method is not a preflight')
  const get = await fastify.inject({ url: '/projects?limit=1', headers: { origin: 'https://evil.example' } })
  t.equal(get.statusCode, 200)
  t.equal(get.headers['access-control-allow-origin'], undefined)
})

t.test('CORS_ORIGINS=* allows any origin; unset, no CORS at all', async (t) => {
  const open = await buildWithDemoData(t, { config: { CORS_ORIGINS: '*' } })
  const pre = await open.inject(preflight('https://anyone.example'))
  t.equal(pre.statusCode, 204)
  t.equal(pre.headers['access-control-allow-origin'], '*')
  const off = await buildWithDemoData(t)
  const none = await off.inject(preflight(APP))
  t.equal(none.statusCode, 405)
  const get = await off.inject({ url: '/projects?limit=1', headers: { origin: APP } })
  t.notOk(Object.keys(get.headers).some((name) => name.startsWith('access-control-')), 'no access-control header')
})

t.test('CORS_ORIGINS is checked at start-up', async (t) => {
  t.throws(() => readConfig({ CORS_ORIGINS: 'https://a.example/' }), /CORS_ORIGINS/)
  t.throws(() => readConfig({ CORS_ORIGINS: 'a.example' }), /CORS_ORIGINS/)
})
