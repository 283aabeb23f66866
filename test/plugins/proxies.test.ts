// Behind a proxy: which peers may say where a request came from (TRUST_PROXY), and where the
// Link of the next page points (the forwarded scheme and host, or PUBLIC_URL). Untrusted peers'
// X-Forwarded-* headers change nothing: not the Link, not the rate-limit bucket.
import t from 'tap'
import { readConfig } from '../../plugins/config.js'
import { buildWithDemoData } from '../helpers/demo-app.js'

const PROXY = '10.0.0.7'
const forwarded = {
  'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.org', 'x-forwarded-for': '203.0.113.9'
}
const link = (res: { headers: Record<string, unknown> }): string =>
  /^<([^>]+)>; rel="next"$/.exec(String(res.headers.link))?.[1] ?? ''

t.test('untrusted (TRUST_PROXY unset): forwarded headers are ignored', async (t) => {
  const fastify = await buildWithDemoData(t)
  const res = await fastify.inject({
    url: '/projects?limit=1&sort=-name', headers: { host: 'pod.internal:3000', ...forwarded }, remoteAddress: PROXY
  })
  t.match(link(res), /^http:\/\/pod\.internal:3000\/projects\?limit=1&sort=-name&after=/,
    'the Host header and the socket\'s scheme')
  const junk = await fastify.inject({ url: '/projects?limit=1', headers: { host: 'evil.example/x?y=' } })
  t.match(link(junk), /^\/projects\?limit=1&after=/,
    'a Host that is not a host name is not written: the Link is relative')
})

t.test('trusted by address: the forwarded scheme and host build the Link', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { TRUST_PROXY: `${PROXY},127.0.0.1/8` } })
  const res = await fastify.inject({ url: '/projects?limit=1&skip=1', headers: forwarded, remoteAddress: PROXY })
  t.match(link(res), /^https:\/\/api\.example\.org\/projects\?limit=1&after=[A-Za-z0-9_.-]+$/,
    'https and the ingress host; skip dropped')
  const stranger = await fastify.inject({
    url: '/projects?limit=1', headers: { host: 'pod:3000', ...forwarded }, remoteAddress: '192.0.2.1'
  })
  t.match(link(stranger), /^http:\/\/pod:3000\//, 'a peer that is not the proxy cannot choose the host')
  const odd = await fastify.inject({
    url: '/projects?limit=1',
    headers: { host: 'pod:3000', 'x-forwarded-proto': 'gopher', 'x-forwarded-host': 'a b' },
    remoteAddress: PROXY
  })
  t.match(link(odd), /^\/projects\?/, 'a forwarded host that is not a host name is not written')
})

t.test('PUBLIC_URL is the base of the Link whatever the headers say', async (t) => {
  const fastify = await buildWithDemoData(t,
    { config: { TRUST_PROXY: 'true', PUBLIC_URL: 'https://events.example.com/listing' } })
  const res = await fastify.inject({ url: '/projects?limit=1', headers: forwarded, remoteAddress: PROXY })
  t.match(link(res), /^https:\/\/events\.example\.com\/listing\/projects\?limit=1&after=/)
  const doc = (await fastify.inject('/docs/json')).json() as { servers?: Array<{ url: string }> }
  t.same(doc.servers, [{ url: 'https://events.example.com/listing' }], 'Swagger UI calls the public address')
})

t.test('the rate limit keys on the forwarded client only when the proxy is trusted', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { TRUST_PROXY: PROXY, RATE_LIMIT_PER_MINUTE: 2 } })
  const get = async (client: string, peer = PROXY): Promise<number> => (await fastify.inject({
    url: '/projects?limit=1', headers: { 'x-forwarded-for': client }, remoteAddress: peer
  })).statusCode
  t.same([await get('198.51.100.1'), await get('198.51.100.1'), await get('198.51.100.1')], [200, 200, 429],
    'one client behind the proxy uses up its bucket')
  t.equal(await get('198.51.100.2'), 200, 'another client behind the same proxy has its own')
  const direct = '192.0.2.50'
  t.same([await get('198.51.100.3', direct), await get('198.51.100.4', direct), await get('198.51.100.5', direct)],
    [200, 200, 429], 'a direct caller cannot change its bucket with X-Forwarded-For')
})

t.test('TRUST_PROXY and PUBLIC_URL are checked at start-up', async (t) => {
  t.throws(() => readConfig({ TRUST_PROXY: '10.0.0.0/33' }), /TRUST_PROXY/)
  t.throws(() => readConfig({ TRUST_PROXY: 'proxy.internal' }), /TRUST_PROXY/)
  t.throws(() => readConfig({ TRUST_PROXY: '0' }), /TRUST_PROXY=0: a hop count/)
  t.throws(() => readConfig({ PUBLIC_URL: 'https://x.example/?a=1' }), /PUBLIC_URL/)
  t.throws(() => readConfig({ PUBLIC_URL: 'ftp://x.example' }), /PUBLIC_URL/)
  t.equal(readConfig({ PUBLIC_URL: 'https://x.example/api/' }).PUBLIC_URL, 'https://x.example/api',
    'a trailing slash is dropped')
  t.doesNotThrow(() => readConfig({ TRUST_PROXY: '2' }))
  t.doesNotThrow(() => readConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8, fd00::/8' }))
})

t.test('a hop count trusts that many peers nearest the service', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { TRUST_PROXY: '1' } })
  const res = await fastify.inject({ url: '/projects?limit=1', headers: forwarded, remoteAddress: PROXY })
  t.match(link(res), /^https:\/\/api\.example\.org\//)
})
