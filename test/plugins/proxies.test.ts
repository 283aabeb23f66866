// Behind a proxy: which peers may say where a request came from (TRUST_PROXY), and where the
// Link of the next page points (the forwarded scheme and host, or PUBLIC_URL). Untrusted peers'
// X-Forwarded-* headers change nothing: not the Link, not the rate-limit bucket.
import net, { type AddressInfo } from 'node:net'
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
  const junk = await fastify.inject({ url: '/projects?limit=1', headers: { host: 'pod:99999' } })
  t.match(link(junk), /^\/projects\?limit=1&after=/, 'a port past 65535 is not written: the Link is relative')
  const invalid = await fastify.inject({ url: '/projects?limit=1', headers: { host: 'evil.example/x?y=' } })
  t.match([invalid.statusCode, invalid.json()], [400, { code: 'BAD_REQUEST', errors: [{ param: 'host' }] }],
    'a Host that is no host and port is refused (RFC 9112, 3.2)')
})

t.test('an absolute-form target: the Link keeps its path, on its host (RFC 9112, 3.2.2)', async (t) => {
  const fastify = await buildWithDemoData(t)
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  const { port } = fastify.server.address() as AddressInfo
  const ask = async (target: string): Promise<string> => await new Promise((resolve, reject) => {
    let answer = ''
    // Written without ending the socket (a half-closed client's answer is dropped): the server closes.
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: pod:3000\r\nConnection: close\r\n\r\n`)
    })
    socket.setEncoding('utf8').on('data', (chunk: string) => { answer += chunk }).on('end', () => { resolve(answer) })
      .on('error', reject)
  })
  const linkIn = (answer: string): string => /^link: <([^>]+)>/im.exec(answer)?.[1] ?? ''
  t.match(linkIn(await ask('http://api.example.org/projects?limit=1')),
    /^http:\/\/api\.example\.org\/projects\?limit=1&after=/, 'the target\'s host, not Host\'s; its path once')
  t.match(await ask('http://evil.example:99999/projects?limit=1'), /^HTTP\/1\.1 400 [\s\S]*"code":"BAD_REQUEST"/,
    'a target with an impossible port is refused')
  t.match(await ask('http://api.example.org/nowhere?x=1'), /"detail":"No route GET \/nowhere;/,
    'a 404 names the path, not the target')
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
  const upper = await fastify.inject({
    url: '/projects?limit=1', headers: { ...forwarded, 'x-forwarded-proto': 'HTTPS' }, remoteAddress: PROXY
  })
  t.match(link(upper), /^https:\/\/api\.example\.org\//, 'a scheme in capitals is the same scheme')
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
  const page = (await fastify.inject('/docs')).body
  const assets = [...page.matchAll(/(?:href|src)="([^"]+)"/g)].map(([, url]) => url as string)
    .filter((url) => url.includes('static'))
  t.ok(assets.length > 0 && assets.every((url) => url.startsWith('/listing/docs/static/')),
    `the page's assets carry the public path: ${assets.join(' ')}`)
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
