// Compressed answers: pages of 1 KiB or more are compressed as Accept-Encoding
// asks — zstd where the runtime has it, then br, then gzip — with Vary: Accept-Encoding on
// every list answer; COMPRESSION=off sends identity always. The bytes decompress to the very
// answer a client without compression gets; HEAD carries the headers of its GET.
import zlib from 'node:zlib'
import t from 'tap'
import { ENCODINGS, LEVELS } from '../../plugins/compression.js'
import { buildWithDemoData, projectIds } from '../helpers/demo-app.js'
import { decompress } from '../helpers/decompress.js'

const fastify = await buildWithDemoData(t)
const { publicIds } = await projectIds(fastify)
const page = `/projects/${publicIds[0] as string}/registrations?limit=100`
const zstd = ENCODINGS.includes('zstd' as never)

t.test('each encoding a client asks for, the same answer, a fifth of the bytes or less', async (t) => {
  const identity = await fastify.inject({ url: page, headers: { 'accept-encoding': 'identity' } })
  t.equal(identity.headers['content-encoding'], undefined)
  t.match(String(identity.headers.vary), /accept-encoding/i, 'Vary even when not compressed')
  for (const encoding of ENCODINGS) {
    const res = await fastify.inject({ url: page, headers: { 'accept-encoding': encoding } })
    t.equal(res.headers['content-encoding'], encoding, encoding)
    t.match(String(res.headers.vary), /accept-encoding/i)
    t.equal(res.headers.link, identity.headers.link, 'the Link header is kept')
    t.same(JSON.parse(decompress(encoding, res.rawPayload).toString()).data, identity.json().data,
      `${encoding}: the same documents`)
    t.ok(res.rawPayload.length <= identity.rawPayload.length / 5,
      `${encoding}: ${res.rawPayload.length} of ${identity.rawPayload.length} bytes`)
  }
})

t.test('each encoding at its level: the bytes zlib makes at that level', async (t) => {
  // @fastify/compress hands zlibOptions to zstd as well as gzip; no document promises it, so the
  // bytes are held here: a level that stopped reaching its encoder would make other bytes.
  const identity = (await fastify.inject({ url: page, headers: { 'accept-encoding': 'identity' } })).rawPayload
  const zstdLevel = (zlib.constants as Record<string, number>).ZSTD_c_compressionLevel as number
  const expected: Record<string, () => Buffer> = {
    gzip: () => zlib.gzipSync(identity, { level: LEVELS.gzip }),
    br: () => zlib.brotliCompressSync(identity, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: LEVELS.br } }),
    zstd: () => (zlib as unknown as { zstdCompressSync: (b: Buffer, o: object) => Buffer })
      .zstdCompressSync(identity, { params: { [zstdLevel]: LEVELS.zstd } })
  }
  for (const encoding of ENCODINGS) {
    const res = await fastify.inject({ url: page, headers: { 'accept-encoding': encoding } })
    t.same(res.rawPayload, (expected[encoding] as () => Buffer)(), `${encoding} at level ${LEVELS[encoding]}`)
  }
})

t.test('the preference when a client takes every encoding: zstd where the runtime has it, then br, then gzip; ' +
  'q-values are honoured', async (t) => {
  const all = await fastify.inject({ url: page, headers: { 'accept-encoding': 'gzip, deflate, br, zstd' } })
  t.equal(all.headers['content-encoding'], zstd ? 'zstd' : 'br')
  const browser = await fastify.inject({ url: page, headers: { 'accept-encoding': 'gzip, deflate, br' } })
  t.equal(browser.headers['content-encoding'], 'br', 'what browsers send')
  const weighted = await fastify.inject({ url: page, headers: { 'accept-encoding': 'br;q=0.5, gzip;q=1' } })
  t.equal(weighted.headers['content-encoding'], 'gzip')
  const none = await fastify.inject({ url: page, headers: { 'accept-encoding': 'compress' } })
  t.equal(none.headers['content-encoding'], undefined, 'an encoding we do not have: identity')
})

t.test('HEAD answers with the headers of its GET in every encoding: ' +
  'Content-Encoding, Vary, Content-Length', async (t) => {
  const project = `/projects/${publicIds[0] as string}`
  const paths = [`${project}/sessions?limit=50`, `${project}/registrations/counts?by=sessionsSubscriptions.session`]
  // What differs from one answer to the next, whatever the method.
  const headersOf = ({ headers }: { headers: Record<string, unknown> }) =>
    ({ ...headers, 'x-request-id': undefined, date: undefined })
  for (const url of paths) {
    for (const encoding of ['identity', ...ENCODINGS]) {
      const get = await fastify.inject({ url, headers: { 'accept-encoding': encoding } })
      const head = await fastify.inject({ method: 'HEAD', url, headers: { 'accept-encoding': encoding } })
      t.equal(get.statusCode, 200, `${url} ${encoding}`)
      t.equal(get.headers['content-encoding'], encoding === 'identity' ? undefined : encoding,
        `${url}: GET is ${encoding}`)
      t.same(headersOf(head), headersOf(get), `${url} ${encoding}: HEAD's headers are GET's`)
      t.equal(head.headers['content-length'], String(get.rawPayload.length),
        `${url} ${encoding}: the length of GET's body`)
      t.equal(head.rawPayload.length, 0, 'and no body')
    }
  }
})

t.test('answers under 1 KiB are sent as they are', async (t) => {
  const small = await fastify.inject({
    url: '/projects/public?limit=1&fields=name', headers: { 'accept-encoding': 'gzip, br' }
  })
  t.ok(small.rawPayload.length < 1024)
  t.equal(small.headers['content-encoding'], undefined)
  t.match(String(small.headers.vary), /accept-encoding/i)
})

t.test('a problem varies with Accept-Encoding too, raised before a list\'s handler or by it', async (t) => {
  const filter = encodeURIComponent(JSON.stringify(Object.fromEntries(
    Array.from({ length: 20 }, (_, i) => [`unknown${i}`, 1]))))
  for (const [url, status] of [
    ['/projects?limit=x', 400], [`/projects?filter=${filter}`, 400], ['/projects/not-an-id/sessions', 400],
    ['/projects/65cd7e3007370d3300000009/sessions', 404], ['/nowhere', 404]
  ] as const) {
    const res = await fastify.inject({ url, headers: { 'accept-encoding': 'gzip' } })
    t.equal(res.statusCode, status, url)
    t.match(String(res.headers.vary), /accept-encoding/i, `${url}: Vary`)
  }
})

t.test('COMPRESSION=off: identity always', async (t) => {
  const off = await buildWithDemoData(t, { config: { COMPRESSION: 'off' } })
  const { publicIds } = await projectIds(off)
  const res = await off.inject({
    url: `/projects/${publicIds[0] as string}/registrations?limit=100`,
    headers: { 'accept-encoding': 'gzip, deflate, br, zstd' }
  })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-encoding'], undefined)
  t.notMatch(String(res.headers.vary ?? ''), /accept-encoding/i)
})
