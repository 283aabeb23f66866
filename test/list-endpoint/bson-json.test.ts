// The BSON → JSON transcoder against the documented contract: for documents holding values of
// every BSON type in every field of every kind, its output parses to exactly what the kind's
// response schema serializer gives for the decoded document (after the off-schema guard), and
// it reports the same values left out.
import { isUtf8 } from 'node:buffer'
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import Fastify from 'fastify'
import {
  BSON, BSONRegExp, Binary, Code, Decimal128, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, type Document
} from 'mongodb'
import t from 'tap'
import type { TObject } from '@sinclair/typebox'
import { bsonToJson, documentsToJson } from '../../list-endpoint/bson-json.js'
import { decodeFields, decodeRaw, pageOf } from '../../list-endpoint/bson-page.js'
import { Out, putText } from '../../list-endpoint/json-out.js'
import { listEnvelope } from '../../list-endpoint/list-schema.js'
import { offSchemaGuard, exactCustom, type Misfit } from '../../list-endpoint/off-schema.js'
import * as kinds from '../../schemas/kinds.js'
import { documentFor } from './bson-json-cases.js'

// The serializer the routes use: Fastify's, compiled from the list envelope of each kind.
const fastify = Fastify()
for (const schema of Object.values(kinds)) fastify.addSchema(schema)
for (const [name, schema] of Object.entries(kinds)) {
  fastify.post(`/${name}`, { schema: { response: { 200: listEnvelope(schema) } } }, async (request) => {
    const docs = (request.body as { docs: string[] }).docs.map((hex) => decodeRaw(Buffer.from(hex, 'hex')))
    const misfits: Misfit[] = []
    const data = offSchemaGuard(schema)(docs, (misfit) => misfits.push(misfit))
    const next = JSON.stringify(misfits.map(({ field, id }) => [field, String(id)]))
    return { data, limit: 0, skip: 0, total: misfits.length, next }
  })
}
await fastify.ready()
t.teardown(() => fastify.close())

async function viaSchema (kind: string, docs: Buffer[]): Promise<{ data: unknown, misfits: string[][] }> {
  const payload = { docs: docs.map((doc) => doc.toString('hex')) }
  const res = await fastify.inject({ method: 'POST', url: `/${kind}`, payload })
  if (res.statusCode !== 200) throw new Error(res.body)
  const body = res.json()
  return { data: body.data, misfits: (JSON.parse(body.next) as string[][]).sort() }
}

function viaTranscoder (schema: TObject, docs: Buffer[]): { data: unknown, misfits: string[][] } {
  const misfits: Misfit[] = []
  const json = bsonToJson(schema)(pageOf(docs), undefined, (misfit) => misfits.push(misfit)).toString('utf8')
  // Reported in the schema's order rather than the stored one: the order is not part of the contract.
  return { data: JSON.parse(json), misfits: misfits.map(({ field, id }) => [field, String(id)]).sort() }
}

const serialize = (doc: Document): Buffer => Buffer.from(BSON.serialize(doc))

const show = (value: unknown): string => JSON.stringify(value, (_, v) => typeof v === 'bigint' ? `${v}n` : v)

for (const [name, schema] of Object.entries(kinds)) {
  t.test(`${name}: the transcoder gives what the schema serializer gives`, async (t) => {
    let runs = 0
    await t.resolves(fc.assert(fc.asyncProperty(fc.array(documentFor(schema), { maxLength: 3 }), async (docs) => {
      runs++
      const raw = docs.map(serialize)
      const expected = await viaSchema(name, raw)
      const actual = viaTranscoder(schema, raw)
      if (!isDeepStrictEqual(actual, expected)) {
        throw new Error(`documents ${raw.map((doc) => show(decodeRaw(doc))).join(' ')}\n` +
          `schema:     ${show(expected)}\ntranscoder: ${show(actual)}`)
      }
    }), { numRuns: 300, seed: 11 }))
    t.equal(runs, 300, '300 pages of up to 3 documents')
  })
}

t.test('schema-less (the raw floor writer): what JSON.stringify gives for the decoded documents, ' +
  'Int64s exact', async (t) => {
  let runs = 0
  const pages = fc.array(fc.oneof(...Object.values(kinds).map(documentFor)), { maxLength: 3 })
  t.doesNotThrow(() => fc.assert(fc.property(pages, (docs) => {
    runs++
    const raw = docs.map(serialize)
    const actual = JSON.parse(documentsToJson(raw, '{"data":', '}').toString()).data
    const expected = JSON.parse(JSON.stringify(exactCustom(raw.map(decodeRaw))))
    if (!isDeepStrictEqual(actual, expected)) {
      throw new Error(`documents ${raw.map((doc) => show(decodeRaw(doc))).join(' ')}\n` +
        `stringify: ${show(expected)}\nwriter:    ${show(actual)}`)
    }
  }), { numRuns: 300, seed: 5 }))
  t.equal(runs, 300)
})

t.test('hand-made edges: dates out of range, Int64 at 2^53, undefined, repeated names', async (t) => {
  const { Session, Registration } = kinds
  const id = new ObjectId()
  // A date element whose int64 is beyond what a JavaScript Date holds: patched in after serializing.
  const dated = serialize({ _id: id, start: new Date(0), end: new Date(1) })
  const at = dated.indexOf(Buffer.from('start\u0000')) + 6
  dated.writeBigInt64LE(8_640_000_000_000_001n, at)
  const longs = [2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n), -(2n ** 53n) - 1n, 2n ** 63n - 1n]
    .map((n) => serialize({ _id: id, maxNumberOfParticipants: Long.fromBigInt(n) }))
  // Int32s are written digit by digit: the signs, the powers of ten and both ends.
  const ints = [-(2 ** 31), -(2 ** 31) + 1, -100, -10, -9, -1, 0, 1, 9, 10, 99, 100, 2 ** 31 - 1]
    .map((n) => serialize({ _id: id, maxNumberOfParticipants: new Int32(n) }))
  for (const doc of [dated, ...longs, ...ints]) {
    const kind = doc === dated ? Session : kinds.Place
    const name = doc === dated ? 'Session' : 'Place'
    t.strictSame(viaTranscoder(kind, [doc]), await viaSchema(name, [doc]))
  }
  t.strictSame(viaTranscoder(Session, [dated]).misfits, [['start', id.toHexString()]])
  // Type 0x06 (undefined) and a repeated top-level name, written by hand.
  const undef = serialize({ _id: id, name: 'x', customFields: { a: 1, b: null } })
  undef[undef.indexOf(Buffer.from('b\u0000')) - 1] = 0x06
  const twice = serialize({ _id: id, name: 'first', nbme: 'second' })
  twice.write('a', twice.indexOf(Buffer.from('nbme\u0000')) + 1, 'latin1')
  for (const doc of [undef, twice]) {
    t.strictSame(viaTranscoder(Registration, [doc]), await viaSchema('Registration', [doc]))
  }
  t.strictSame(viaTranscoder(Registration, [twice]).data, [{ _id: id.toHexString(), name: 'second' }],
    'the last of a repeated name, as decoded')
})

t.test('customFields: an Int64 beyond ±2^53 in Extended JSON, exact, on the fast path ' +
  'and the decoder\'s', async (t) => {
  const { Place } = kinds
  const _id = new ObjectId()
  const big = Long.fromBigInt(2n ** 63n - 1n)
  const customFields = {
    edge: Long.fromBigInt(2n ** 53n), big, low: Long.fromBigInt(-(2n ** 53n) - 1n), list: [big, { in: big }]
  }
  const exact = {
    edge: 2 ** 53,
    big: { $numberLong: '9223372036854775807' },
    low: { $numberLong: '-9007199254740993' },
    list: [{ $numberLong: '9223372036854775807' }, { in: { $numberLong: '9223372036854775807' } }]
  }
  // A Decimal128 beside them sends the whole value through the decoder.
  const withDecimal = { ...customFields, price: Decimal128.fromString('12.50') }
  const cases = [[customFields, exact], [withDecimal, { ...exact, price: { $numberDecimal: '12.50' } }]] as const
  for (const [fields, written] of cases) {
    const doc = serialize({ _id, customFields: fields })
    t.same(viaTranscoder(Place, [doc]).data, [{ _id: _id.toHexString(), customFields: written }])
    t.same((await viaSchema('Place', [doc])).data, [{ _id: _id.toHexString(), customFields: written }],
      'the decoded path agrees')
  }
  const plain = { a: [1, { b: 'x' }] }
  t.equal(exactCustom(plain), plain, 'a value without one is returned as it is')
})

t.test('customFields: what JSON has no form for in canonical Extended JSON, never null, {} or text', async (t) => {
  const { Place } = kinds
  const _id = new ObjectId()
  const stored = {
    nan: NaN,
    inf: Infinity,
    ninf: -Infinity,
    ts: new Timestamp({ t: 1, i: 2 }),
    re: new BSONRegExp('a+', 'ix'),
    min: new MinKey(),
    max: new MaxKey(),
    bin: new Binary(Buffer.from('hi')),
    code: new Code('x'),
    date: new Date(0),
    id: _id,
    // A stored field named _bsontype (written below: the JavaScript serializer refuses it) is data.
    fake: { _bsontypZ: 'Binary', x: 1 }
  }
  const written = {
    nan: { $numberDouble: 'NaN' },
    inf: { $numberDouble: 'Infinity' },
    ninf: { $numberDouble: '-Infinity' },
    ts: { $timestamp: { t: 1, i: 2 } },
    re: { $regularExpression: { pattern: 'a+', options: 'ix' } },
    min: { $minKey: 1 },
    max: { $maxKey: 1 },
    bin: { $binary: { base64: 'aGk=', subType: '00' } },
    code: { $code: 'x' },
    date: '1970-01-01T00:00:00.000Z',
    id: _id.toHexString(),
    fake: { _bsontype: 'Binary', x: 1 }
  }
  for (const [name, value] of Object.entries(stored)) {
    const doc = serialize({ _id, customFields: { [name]: value, list: [value] } })
    for (let at = doc.indexOf('_bsontypZ'); at >= 0; at = doc.indexOf('_bsontypZ')) doc.write('e', at + 8)
    const json = written[name as keyof typeof written]
    const expected = [{ _id: _id.toHexString(), customFields: { [name]: json, list: [json] } }]
    t.same(viaTranscoder(Place, [doc]).data, expected, `${name}: the transcoder`)
    t.same((await viaSchema('Place', [doc])).data, expected, `${name}: the decoded path`)
  }
})

t.test('a name is matched whole, whatever the documents before it held', async (t) => {
  // Each name is first compared with the field that followed the previous one in the document before.
  const ids = [new ObjectId(), new ObjectId(), new ObjectId(), new ObjectId()]
  const docs = [
    serialize({ _id: ids[0], name: 'a', role: 'r' }),
    serialize({ _id: ids[1], names: 'no', nam: 'no', name: 'b' }),
    serialize({ _id: ids[2], role: 'r2', name: 'c' }),
    serialize({ _id: ids[3], name: 'd', role: 'r3' })
  ]
  t.strictSame(viaTranscoder(kinds.Registration, docs), await viaSchema('Registration', docs))
  t.strictSame(viaTranscoder(kinds.Registration, docs).data, [
    { _id: ids[0]?.toHexString(), name: 'a', role: 'r' },
    { _id: ids[1]?.toHexString(), name: 'b' },
    { _id: ids[2]?.toHexString(), name: 'c', role: 'r2' },
    { _id: ids[3]?.toHexString(), name: 'd', role: 'r3' }
  ])
})

t.test('an array of documents holding something else is left out before any item is read', async (t) => {
  const id = new ObjectId()
  const doc = serialize({ _id: id, sessionsSubscriptions: [{ session: new ObjectId() }, 'not a document'] })
  // The first item's closing NUL broken: reading that item would find it malformed.
  const item = doc.indexOf(Buffer.from('0\u0000')) + 2
  doc[item + doc.readInt32LE(item) - 1] = 1
  const out = viaTranscoder(kinds.Registration, [doc])
  t.strictSame(out.data, [{ _id: id.toHexString() }])
  t.strictSame(out.misfits, [['sessionsSubscriptions', id.toHexString()]])
})

t.test('strings that are not UTF-8 are left out and reported, not sent broken', async (t) => {
  const id = new ObjectId()
  const doc = serialize({ _id: id, name: 'abc' })
  doc[doc.indexOf(Buffer.from('abc'))] = 0xff
  const out = viaTranscoder(kinds.Category, [doc])
  t.strictSame(out.data, [{ _id: id.toHexString() }])
  t.strictSame(out.misfits, [['name', id.toHexString()]])
})

t.test('text is written byte for byte as JSON.stringify writes it, or refused when it is not UTF-8', async (t) => {
  const write = (bytes: Buffer, lenient: boolean): Buffer | false => {
    const out = new Out(8)
    return putText(out, bytes, 0, bytes.length, lenient) && out.buf.subarray(0, out.pos)
  }
  // Valid UTF-8 of every kind of character (escapes, non-ASCII, astral), then any bytes at all.
  const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }),
    fc.constantFrom('Hélène "é" \\ \u0000\u007f\u0080 😀', 'é\n', '\u2028\u2029'))
  t.doesNotThrow(() => fc.assert(fc.property(text, (value) => {
    const bytes = Buffer.from(value, 'utf8')
    const expected = Buffer.from(JSON.stringify(value), 'utf8')
    return isDeepStrictEqual(write(bytes, false), expected) && isDeepStrictEqual(write(bytes, true), expected)
  }), { numRuns: 3000 }))
  const anyBytes = fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes))
  t.doesNotThrow(() => fc.assert(fc.property(anyBytes, (bytes) => {
    const lenient = Buffer.from(JSON.stringify(bytes.toString('utf8')), 'utf8')
    return isDeepStrictEqual(write(bytes, true), lenient) &&
      isDeepStrictEqual(write(bytes, false), isUtf8(bytes) ? lenient : false)
  }), { numRuns: 3000 }))
})

t.test('omit leaves out the fields read only for the cursor', async (t) => {
  const id = new ObjectId()
  const doc = serialize({ _id: id, name: 'n', start: new Date(5) })
  const json = bsonToJson(kinds.Session)(pageOf([doc]), new Set(['start']), () => t.fail('nothing misfits'),
    '{"data":', ',"limit":1}')
  t.strictSame(JSON.parse(json.toString()).data, [{ _id: id.toHexString(), name: 'n' }])
})

t.test('dates are written as Date#toISOString writes them, across the whole range', async (t) => {
  const edges = [
    -62167219200000, -62167219200001, -62167219199999, 253402300799999, 253402300800000, 0, -1, 951782400000,
    951868800000, 4107542400000, -2208988800001, 8.64e15, -8.64e15
  ]
  const anyMs = fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.integer({ min: -2.6e14, max: 2.6e14 }))
  const random = fc.sample(anyMs, { numRuns: 20_000, seed: 7 })
  // Days already written are remembered (by day number modulo 1024): many dates of few days.
  const nearby = fc.sample(fc.integer({ min: 1.7e12, max: 1.7e12 + 10 * 86_400_000 }), { numRuns: 2000, seed: 3 })
  random.push(...nearby, ...nearby.map((ms) => ms + 1024 * 86_400_000))
  const transcode = bsonToJson(kinds.Session)
  const wrong: number[] = []
  for (const ms of [...edges, ...random]) {
    const doc = serialize({ _id: new ObjectId(), start: new Date(ms) })
    const written = JSON.parse(transcode(pageOf([doc]), undefined, () => {}).toString())[0].start
    if (written !== new Date(ms).toISOString()) wrong.push(ms)
  }
  t.same(wrong, [], `${edges.length + random.length} dates`)
})

t.test('decodeFields decodes the named top-level fields as the whole document decodes them, ' +
  'and only those', async (t) => {
  const id = new ObjectId()
  const doc = serialize({
    _id: id,
    name: 'n',
    start: new Date(5),
    customFields: { x: new Decimal128('1.5'), y: [1, 'a'] },
    end: Long.fromNumber(7)
  })
  const twice = serialize({ _id: id, name: 'first', nbme: 'second' })
  twice.write('a', twice.indexOf(Buffer.from('nbme\u0000')) + 1, 'latin1')
  const page = pageOf([serialize({ _id: new ObjectId() }), doc, twice])
  const whole = decodeRaw(doc)
  t.strictSame(decodeFields(page, 1, ['start', 'customFields', '_id']),
    { _id: whole._id, start: whole.start, customFields: whole.customFields })
  t.strictSame(decodeFields(page, 1, ['absent']), {})
  t.strictSame(decodeFields(page, 2, ['name']), { name: 'second' }, 'the last of a repeated name, as decoded')
})
