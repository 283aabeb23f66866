import { Binary, BSON, Decimal128, Double, Int32, Long, ObjectId, type Document } from 'mongodb'
import fc from 'fast-check'
import t from 'tap'
import { decodeFields, pageOf, topLevelValues } from '../../list-endpoint/bson-page.js'
import { EXACT_VALUES } from '../../list-endpoint/cursor.js'
import { valueAt } from '../../list-endpoint/keyset.js'

/** What a cursor held before the values were copied: the sort keys decoded as stored, then encoded. */
function decodedThenEncoded (doc: Buffer, names: string[]): Buffer {
  const last = decodeFields(pageOf([doc]), 0, names, EXACT_VALUES)
  const keyed: Document = {}
  names.forEach((name, i) => { keyed[i] = valueAt(last, name) ?? null })
  return Buffer.from(BSON.serialize(keyed))
}

const value = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.integer().map((n) => new Int32(n)),
  fc.double().map((n) => new Double(n)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => Long.fromBigInt(n)),
  fc.date({ noInvalidDate: true }),
  fc.boolean(),
  fc.constant(null),
  fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => new ObjectId(Buffer.from(bytes))),
  fc.constant(Decimal128.fromString('1.10')),
  fc.uint8Array({ maxLength: 8 }).map((bytes) => new Binary(Buffer.from(bytes))),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.record({ a: fc.integer() })
)
const NAMES = ['_id', 'start', 'name', 'n', 'é']

t.test('the sort keys copied from a document are the BSON that decoding and encoding them gave', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(
    fc.dictionary(fc.constantFrom(...NAMES), value),
    fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }),
    (stored, names) => {
      const doc = Buffer.from(BSON.serialize(stored))
      const copied = topLevelValues(pageOf([doc]), 0, names)
      return copied !== undefined && copied.equals(decodedThenEncoded(doc, names))
    }
  ), { numRuns: 1000 }), '1,000 documents and sorts agree')
})

t.test('a repeated name: the last one, as decoding takes it; a missing one: null', async (t) => {
  // {"start": 1, "start": 2}: BSON allows it, the decoder keeps the last.
  const doc = Buffer.from('1b0000001073746172740001000000107374617274000200000000', 'hex')
  t.same(BSON.deserialize(topLevelValues(pageOf([doc]), 0, ['start', 'name']) as Buffer), { 0: 2, 1: null })
})

t.test('dotted keys and text that is not UTF-8 are left to decoding', async (t) => {
  const doc = Buffer.from(BSON.serialize({ customFields: { x: 1 }, _id: 1 }))
  t.equal(topLevelValues(pageOf([doc]), 0, ['customFields.x', '_id']), undefined)
  // {"name": "\xff"}
  const bad = Buffer.from('1200000002006e616d650002000000ff0000'.replace('02006e616d6500', '026e616d6500'), 'hex')
  bad.writeInt32LE(bad.length, 0)
  t.equal(topLevelValues(pageOf([bad]), 0, ['name']), undefined)
})
