// The one walk over raw BSON (Elements, list-endpoint/bson-elements.ts): every element of a document
// in order, and on bytes that do not hold together (a reply cut short, a length that lies, a name
// without its NUL) a MalformedBson, never a read outside the document or a loop without end.
import { BSON, MongoDecompressionError, MongoParseError, ObjectId } from 'mongodb'
import fc from 'fast-check'
import t from 'tap'
import { classifyDatabaseError } from '../../database/classify-error.js'
import { bsonToJson } from '../../list-endpoint/bson-json.js'
import { Elements, MalformedBson, int32At, isDBRefLike, valueSize } from '../../list-endpoint/bson-elements.js'
import { decodeFields, firstBatch, innerPage, pageOf } from '../../list-endpoint/bson-page.js'
import { EXACT_VALUES } from '../../list-endpoint/cursor.js'
import { Registration } from '../../schemas/kinds.js'

const registration = {
  _id: new ObjectId(),
  name: 'Olga Leroy',
  email: 'olga@example.org',
  createdAt: new Date('2024-04-20T21:00:00Z'),
  project: new ObjectId(),
  role: 'volunteer',
  sessionsSubscriptions: [
    { session: new ObjectId(), subscribedAt: new Date('2024-05-01T00:00:00Z') },
    { session: new ObjectId() }
  ],
  customFields: { ticket: 'weekend', nested: { a: [1, 'two', null] }, re: /a+/i, n: 1.5 }
}
const bytes = Buffer.from(BSON.serialize(registration))

t.test('the walk gives every element in order, with its name and value bounds', async (t) => {
  const names: string[] = []
  for (const e = new Elements(bytes, 0); e.next();) {
    names.push(bytes.toString('utf8', e.nameAt, e.nameEnd))
    t.ok(e.valueAt === e.nameEnd + 1 && e.valueEnd <= e.end, names.at(-1) ?? '')
  }
  t.same(names, Object.keys(registration))
  const e = new Elements(bytes, 0)
  while (e.next());
  t.equal(e.valueEnd, bytes.length - 1, 'the last value ends at the document\'s NUL')
})

const transcode = bsonToJson(Registration)
/** Every reader of raw BSON, on the bytes. */
function readAll (buf: Buffer): void {
  for (const e = new Elements(buf, 0); e.next();) { if (e.type === 3) isDBRefLike(buf, e.valueAt, e.valueEnd) }
  const page = { bytes: buf, starts: [0] }
  transcode(page, undefined, () => {})
  // As the service decodes sort keys and ids: regexes stay BSON regexes (a JavaScript RegExp may refuse the pattern).
  decodeFields(page, 0, ['name', 'customFields'], EXACT_VALUES)
  innerPage(page, 'customFields')
}

t.test('a document cut short, or with a length, type or NUL changed, is MalformedBson, ' +
  'never an out-of-range read', async (t) => {
  let refused = 0
  fc.assert(fc.property(fc.oneof(
    fc.nat({ max: bytes.length - 1 }).map((cut) => {
      const b = Buffer.from(bytes.subarray(0, cut))
      if (b.length >= 4) b.writeInt32LE(bytes.length, 0)
      return b
    }),
    fc.tuple(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 0, max: 255 })).map(([at, value]) => {
      const b = Buffer.from(bytes)
      b[at] = value
      return b
    }),
    fc.tuple(fc.nat({ max: bytes.length - 4 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }))
      .map(([at, value]) => {
        const b = Buffer.from(bytes)
        b.writeInt32LE(value, at)
        return b
      })
  ), (mutated) => {
    try {
      readAll(mutated)
    } catch (error) {
      // js-bson's own decoder (decodeFields) refuses in its words; every walk of ours in ours.
      if (error instanceof MalformedBson || (error as Error).name === 'BSONError') { refused++; return }
      throw error
    }
  }), { numRuns: 3000 })
  t.ok(refused > 300, `${refused} of 3000 mutations refused cleanly`)
})

t.test('a cursor reply whose batch lies about its length is refused', async (t) => {
  const reply = Buffer.from(BSON.serialize({
    firstBatch: [{ a: 1 }, { a: 2 }], id: BSON.Long.fromNumber(0), ns: 'db.c'
  }))
  t.same(firstBatch(reply).page.starts.length, 2)
  const lying = Buffer.from(reply)
  lying.writeInt32LE(1000, 4 + 1 + 'firstBatch'.length + 1)
  t.throws(() => firstBatch(lying), MalformedBson)
  t.throws(() => new Elements(Buffer.from([5, 0, 0, 0, 1]), 0), MalformedBson, 'a document that does not end with NUL')
  t.throws(() => new Elements(Buffer.from([4, 0, 0, 0]), 0), MalformedBson, 'shorter than the smallest document')
  t.same(pageOf([bytes]).starts, [0])
})

t.test('lengths are read as Buffer#readInt32LE reads them, and fixed sizes are checked too', async (t) => {
  const buffers = fc.uint8Array({ minLength: 4, maxLength: 64 })
  t.doesNotThrow(() => fc.assert(fc.property(buffers, fc.nat(), (bytes, offset) => {
    const buf = Buffer.from(bytes)
    const at = offset % (buf.length - 3)
    return int32At(buf, at) === buf.readInt32LE(at)
  }), { numRuns: 2000 }), '2000 buffers and offsets')
  const date = Buffer.alloc(12)
  t.equal(valueSize(date, 9, 4), 8, 'a date is 8 bytes')
  t.throws(() => valueSize(date, 9, 5), MalformedBson, 'a date cut short is malformed')
  t.throws(() => valueSize(date, 7, 4, 10), MalformedBson, 'an ObjectId past its document is malformed')
  t.throws(() => valueSize(date, 0x20, 4), MalformedBson, 'an unknown type is malformed')
})

t.test('a malformed reply is a BSONError, as the driver\'s own decoding failures are: ' +
  'a database fault, not a 500', async (t) => {
  const error = new MalformedBson('a value runs past its document')
  t.ok(BSON.BSONError.isBSONError(error))
  t.equal(error.name, 'MalformedBson')
  t.match(error.message, /^malformed BSON: a value runs past/)
  t.match(classifyDatabaseError(error), { status: 503, code: 'DATABASE_UNAVAILABLE', detail: /damaged/ })
  t.match(classifyDatabaseError(new BSON.BSONError('corrupt BSON message')),
    { status: 503, code: 'DATABASE_UNAVAILABLE', detail: /damaged/ })
  // What the driver throws for a message that does not hold together (test/faults/garbled-replies.test.ts makes each).
  for (const framing of [
    new MongoParseError('Message size cannot be negative: -5'),
    new MongoDecompressionError('Message body and message header must be the same length'),
    new RangeError('Attempt to access memory outside buffer bounds: buffer length: 10, offset: 8, length: 4')
  ]) {
    t.match(classifyDatabaseError(framing), { status: 503, code: 'DATABASE_UNAVAILABLE', detail: /damaged/ },
      framing.name)
  }
  t.equal(classifyDatabaseError(new Error('a bug')), undefined, 'anything else stays a 500')
  t.equal(classifyDatabaseError(new RangeError('Invalid array length')), undefined, 'a RangeError of another kind too')
})
