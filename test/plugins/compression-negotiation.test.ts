// Which content coding an Accept-Encoding field gets (RFC 9110 §12.5.3; docs/operations.md, "Compressed
// answers"): a coding at q=0 never, `*` only for codings the field does not list, the highest q, and at
// equal q zstd (where the runtime has it), then br, then gzip, then identity; identity when nothing
// offered is acceptable, even after `identity;q=0`. Held for chooseEncoding alone, and over HTTP.
import t from 'tap'
import { chooseEncoding, ENCODINGS } from '../../plugins/compression.js'
import { buildWithDemoData, projectIds } from '../helpers/demo-app.js'
import { decompress } from '../helpers/decompress.js'

/** A field, and the coding it gets where the service offers zstd, br and gzip, and where it offers br and gzip. */
const FIELDS: Array<[field: string, withZstd: string, withoutZstd: string]> = [
  // The refusals and preferences the negotiation once ignored (each got gzip).
  ['gzip;q=0, *', 'zstd', 'br'],
  ['*, gzip;q=0', 'zstd', 'br'],
  ['gzip;q=0, *;q=0.5', 'zstd', 'br'],
  ['zstd;q=0, gzip;q=0, *', 'br', 'br'],
  ['identity, gzip;q=0.5', 'identity', 'identity'],
  ['identity;q=1, gzip;q=0.9', 'identity', 'identity'],
  ['*', 'zstd', 'br'],
  // What it already got right.
  ['gzip;q=0, br', 'br', 'br'],
  ['gzip;q=0', 'identity', 'identity'],
  ['br;q=0.5, gzip', 'gzip', 'gzip'],
  ['br;q=0.5, gzip;q=1', 'gzip', 'gzip'],
  ['gzip, deflate, br, zstd', 'zstd', 'br'],
  ['gzip, deflate, br', 'br', 'br'],
  ['br;q=0.5, gzip;q=0.5', 'br', 'br'],
  ['gzip;q=0.5', 'gzip', 'gzip'],
  ['gzip;q=0.5, identity;q=0.5', 'gzip', 'gzip'],
  ['zstd', 'zstd', 'identity'],
  ['x-gzip', 'gzip', 'gzip'],
  ['GZIP;Q=0, *', 'zstd', 'br'],
  ['compress', 'identity', 'identity'],
  ['', 'identity', 'identity'],
  // Nothing acceptable: identity all the same (RFC 9110 allows it rather than a 406).
  ['identity;q=0', 'identity', 'identity'],
  ['*;q=0', 'identity', 'identity'],
  ['gzip;q=0, identity;q=0', 'identity', 'identity']
]

const zstd = ENCODINGS.includes('zstd' as never)

t.test('chooseEncoding: each field, with zstd offered and without', async (t) => {
  for (const [field, withZstd, withoutZstd] of FIELDS) {
    t.equal(chooseEncoding(field, ['zstd', 'br', 'gzip']), withZstd, `"${field}" with zstd: ${withZstd}`)
    t.equal(chooseEncoding(field, ['br', 'gzip']), withoutZstd, `"${field}" without zstd: ${withoutZstd}`)
    t.equal(chooseEncoding(field), zstd ? withZstd : withoutZstd, `"${field}" with this runtime's codings`)
  }
})

t.test('over HTTP: the Content-Encoding each field gets, the same answer, Vary: Accept-Encoding', async (t) => {
  const fastify = await buildWithDemoData(t)
  const { publicIds } = await projectIds(fastify)
  const url = `/projects/${publicIds[0] as string}/sessions?limit=50`
  const identity = await fastify.inject({ url })
  t.equal(identity.statusCode, 200)
  t.ok(identity.rawPayload.length >= 1024, `a page to compress (${identity.rawPayload.length} bytes)`)
  t.equal(identity.headers['content-encoding'], undefined, 'no Accept-Encoding: identity')
  for (const [field, withZstd, withoutZstd] of FIELDS) {
    const expected = zstd ? withZstd : withoutZstd
    const res = await fastify.inject({ url, headers: { 'accept-encoding': field } })
    t.equal(res.statusCode, 200, `"${field}"`)
    t.equal(res.headers['content-encoding'], expected === 'identity' ? undefined : expected, `"${field}": ${expected}`)
    t.match(String(res.headers.vary), /accept-encoding/i, `"${field}": Vary`)
    t.same(JSON.parse(decompress(res.headers['content-encoding'], res.rawPayload).toString()), identity.json(),
      `"${field}": the same answer`)
  }
})
