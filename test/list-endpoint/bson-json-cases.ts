// The documents bson-json.test.ts transcodes: fast-check arbitraries of documents of a kind, holding
// values of every BSON type in every field, mostly of the field's type, sometimes anything.
import fc from 'fast-check'
import {
  BSONRegExp, BSONSymbol, Binary, Code, DBRef, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp,
  type Document
} from 'mongodb'
import type { TObject } from '@sinclair/typebox'
import { fieldKind } from '../../schemas/fields.js'

// Every BSON type, and the edges of the ones the kinds declare.
const scalarValue = fc.oneof(
  fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', 'a"b\\c', '\u0000\u001f\u007f\u2028', '😀é'),
  fc.double(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 2 ** 53, 1e21, 5e-324).map((n) => new Double(n)),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((n) => new Int32(n)),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((n) => Long.fromBigInt(n)),
  fc.constantFrom(2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, -(2n ** 53n) + 1n, -(2n ** 53n), -(2n ** 53n) - 1n)
    .map((n) => Long.fromBigInt(n)),
  fc.boolean(), fc.constant(null),
  fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => new ObjectId(bytes)),
  fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms)),
  fc.constantFrom(new Date(0), new Date('2024-06-14T09:30:00.123Z'), new Date(-1), new Date(253402300800000)),
  fc.constantFrom(
    Decimal128.fromString('1.5'), new Binary(Buffer.from('hi')), new BSONRegExp('a+', 'i'), new Code('x'),
    new Timestamp({ t: 1, i: 2 }), new MinKey(), new MaxKey(), new BSONSymbol('s'), /re/g
  )
)
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarValue, tie('doc'), tie('array'), fc.constant('dbref').map(() => new DBRef('c', new ObjectId()))
  ),
  doc: fc.dictionary(fc.oneof(
    fc.string({ minLength: 1 }).filter((k) => !k.includes('\u0000') && !k.startsWith('$')),
    fc.constantFrom('$ref', '$id', '$db')
  ), tie('value'), { maxKeys: 4 }),
  array: fc.array(tie('value'), { maxLength: 4 })
})).value

/** A value for a field of this kind: mostly of the right type, sometimes anything. */
function valueFor (property: unknown): fc.Arbitrary<unknown> {
  const id = fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => new ObjectId(bytes))
  const date = fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms))
  let right: fc.Arbitrary<unknown>
  switch (fieldKind(property as never)) {
    case 'string': right = fc.string({ unit: 'grapheme' }); break
    case 'number': right = fc.oneof(fc.double({ noNaN: true }), fc.integer().map((n) => new Int32(n))); break
    case 'boolean': right = fc.boolean(); break
    case 'date': right = date; break
    case 'ref': right = id; break
    case 'string[]':
      right = fc.array(fc.oneof(fc.string(), fc.string(), fc.string(), scalarValue), { maxLength: 4 })
      break
    case 'ref[]': right = fc.array(fc.oneof(id, id, id, scalarValue), { maxLength: 4 }); break
    case 'custom':
      right = fc.dictionary(
        fc.string({ minLength: 1 }).filter((k) => !k.includes('\u0000') && !k.startsWith('$')), anyValue, { maxKeys: 5 }
      )
      break
    case 'object[]':
      right = fc.array(fc.oneof(
        fc.record(
          { session: fc.oneof(id, scalarValue), subscribedAt: fc.oneof(date, scalarValue), other: scalarValue },
          { requiredKeys: [] }
        ),
        // Items that decode to a DBRef, or only look like one, beside items with misfits.
        fc.constant(null).map(() => new DBRef('c', new ObjectId())),
        fc.record(
          { $ref: fc.oneof(fc.string(), scalarValue), $id: scalarValue, session: fc.oneof(id, scalarValue) },
          { requiredKeys: [] }
        ),
        scalarValue), { maxLength: 3 })
      break
    default: throw new Error('unknown field kind')
  }
  return fc.oneof({ weight: 4, arbitrary: right }, { weight: 1, arbitrary: anyValue })
}

export function documentFor (schema: TObject): fc.Arbitrary<Document> {
  // Every stored document has an _id (MongoDB adds one), an ObjectId in our collections.
  const id = fc.uint8Array({ minLength: 12, maxLength: 12 }).map((bytes) => ['_id', new ObjectId(bytes)] as const)
  const fields = Object.entries(schema.properties).map(([name, property]) =>
    name === '_id' ? id : fc.option(valueFor(property).map((value) => [name, value] as const), { nil: undefined }))
  const extra = fc.array(fc.tuple(fc.constantFrom('password', 'secret', 'nested.x', 'z'), anyValue), { maxLength: 2 })
  return fc.tuple(fc.tuple(...fields), extra).chain(([entries, more]) =>
    fc.shuffledSubarray([...entries.filter((entry) => entry !== undefined), ...more], {
      minLength: entries.filter((e) => e !== undefined).length + more.length
    }).map((shuffled) => Object.fromEntries(shuffled)))
}
