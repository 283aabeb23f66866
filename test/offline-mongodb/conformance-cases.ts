// Each case's expectation is the answer the MongoDB manual gives for it; `manual` names the page.
// The same cases run against real MongoDB when MONGODB_URI is set, so any divergence shows.
import { Binary, BSONRegExp, Decimal128, Double, Int32, Long, ObjectId } from 'mongodb'
import type { CollationOptions, Document, Filter, Sort } from 'mongodb'

export const MISSING = Symbol('missing')
const M = 'https://www.mongodb.com/docs/manual/reference/'
/** PCRE2's pattern documentation: the engine MongoDB runs $regex with. */
const P = 'https://pcre.org/current/doc/html/pcre2pattern.html'

export interface ConformanceCase {
  name: string
  manual: string
  /** Values of field `v`; document i gets `_id: i`. MISSING leaves `v` out. */
  values?: unknown[]
  docs?: Document[]
  filter?: Filter<Document>
  sort?: Sort
  /** The find's collation (manual: "Collation"); binary comparison without one. */
  collation?: CollationOptions
  /** Expected `_id`s; in this order when `sort` is given, else as a set. */
  expect: number[]
}

const oid = (n: number): ObjectId => new ObjectId(n.toString(16).padStart(24, '0'))
const day = (iso: string): Date => new Date(`${iso}T00:00:00.000Z`)

export const cases: ConformanceCase[] = [
  // $eq and implicit equality
  { name: '$eq on a string', manual: `${M}operator/query/eq/`, values: ['yoga', 'Yoga', 'yoga class'], filter: { v: { $eq: 'yoga' } }, expect: [0] },
  { name: 'equality matches an array element', manual: `${M}operator/query/eq/#array-element-equals-a-value`, values: [['a', 'b'], ['c'], 'a'], filter: { v: 'a' }, expect: [0, 2] },
  { name: 'equality with an array matches the whole array, in order', manual: `${M}operator/query/eq/#equals-an-array-value`, values: [['a', 'b'], ['b', 'a'], [['a', 'b']]], filter: { v: ['a', 'b'] }, expect: [0, 2] },
  { name: 'embedded-document equality depends on field order', manual: `${M}operator/query/eq/#equals-an-embedded-document`, values: [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 1, b: 2, c: 3 }], filter: { v: { a: 1, b: 2 } }, expect: [0] },
  { name: 'numbers of every BSON type compare by value', manual: `${M}bson-type-comparison-order/#numeric-types`, values: [new Int32(5), new Long(5), new Double(5), Decimal128.fromString('5'), '5', 5.5], filter: { v: 5 }, expect: [0, 1, 2, 3] },
  { name: 'equality with null matches null and missing', manual: `${M}operator/query/eq/`, values: [null, MISSING, 0, ''], filter: { v: null }, expect: [0, 1] },
  { name: '$eq on ObjectId', manual: `${M}operator/query/eq/`, values: [oid(1), oid(2), oid(1).toHexString()], filter: { v: oid(1) }, expect: [0] },
  { name: '$eq on a date', manual: `${M}operator/query/eq/`, values: [day('2024-06-01'), day('2024-06-02'), '2024-06-01'], filter: { v: day('2024-06-01') }, expect: [0] },
  // $ne
  { name: '$ne matches documents without the field', manual: `${M}operator/query/ne/`, values: ['a', 'b', MISSING, null], filter: { v: { $ne: 'a' } }, expect: [1, 2, 3] },
  { name: '$ne on an array field excludes arrays holding the value', manual: `${M}operator/query/ne/#arrays`, values: [['a', 'b'], ['b'], 'a'], filter: { v: { $ne: 'a' } }, expect: [1] },
  // Range operators and type bracketing
  { name: '$gt only compares within the type bracket', manual: `${M}bson-type-comparison-order/`, values: [10, '10', day('2024-01-01'), true, 3, null, MISSING], filter: { v: { $gt: 5 } }, expect: [0] },
  { name: '$gte/$lt on dates', manual: `${M}operator/query/gte/`, values: [day('2024-05-31'), day('2024-06-01'), day('2024-06-15'), day('2024-07-01'), '2024-06-10'], filter: { v: { $gte: day('2024-06-01'), $lt: day('2024-07-01') } }, expect: [1, 2] },
  { name: 'a Long beyond 2^53 compares exactly with a double', manual: `${M}bson-type-comparison-order/#numeric-types`, values: [Long.fromString('9007199254740993'), Long.fromString('9007199254740992')], filter: { v: { $gt: 9007199254740992 } }, expect: [0] },
  { name: '$lt on strings is a binary comparison', manual: `${M}bson-type-comparison-order/#strings`, values: ['B', 'a', 'b', 'A'], filter: { v: { $lt: 'a' } }, expect: [0, 3] },
  { name: '$gt on an array field matches when any element does', manual: `${M}operator/query/gt/`, values: [[1, 10], [1, 2], 7, []], filter: { v: { $gt: 5 } }, expect: [0, 2] },
  { name: '$lte on ObjectId', manual: `${M}operator/query/lte/`, values: [oid(1), oid(2), oid(3), 'x'], filter: { v: { $lte: oid(2) } }, expect: [0, 1] },
  { name: '$gt and $lt on Decimal128 and doubles', manual: `${M}bson-type-comparison-order/#numeric-types`, values: [Decimal128.fromString('1.5'), 2.5, new Int32(2), Decimal128.fromString('3')], filter: { v: { $gt: 1.5, $lt: 3 } }, expect: [1, 2] },
  // $in / $nin
  { name: '$in on scalars and arrays', manual: `${M}operator/query/in/`, values: ['music', ['dance', 'x'], 'theatre', ['x']], filter: { v: { $in: ['music', 'dance'] } }, expect: [0, 1] },
  { name: '$in with a regular expression', manual: `${M}operator/query/in/#use-the--in-operator-with-a-regular-expression`, values: ['bee', 'be', 'Bee', 'see'], filter: { v: { $in: [/^be/, 'see'] } }, expect: [0, 1, 3] },
  { name: '$in with null matches null and missing', manual: `${M}operator/query/in/`, values: [null, MISSING, 'x'], filter: { v: { $in: [null] } }, expect: [0, 1] },
  { name: '$nin matches documents without the field', manual: `${M}operator/query/nin/`, values: ['a', 'b', MISSING, ['a', 'c']], filter: { v: { $nin: ['a'] } }, expect: [1, 2] },
  { name: '$in with ObjectIds', manual: `${M}operator/query/in/`, values: [oid(1), [oid(2), oid(9)], oid(3)], filter: { v: { $in: [oid(1), oid(2)] } }, expect: [0, 1] },
  // $regex
  { name: '$regex with the i option', manual: `${M}operator/query/regex/#perform-case-insensitive-regular-expression-match`, values: ['Yoga', 'yoga', 'YOGA flow', 'pilates'], filter: { v: { $regex: 'yoga', $options: 'i' } }, expect: [0, 1, 2] },
  { name: '$regex with the s option lets a dot match a newline', manual: `${M}operator/query/regex/#use-the-.-dot-character-to-match-new-line`, values: ['a\nb', 'ab', 'axb'], filter: { v: { $regex: '^a.b$', $options: 's' } }, expect: [0, 2] },
  { name: 'a BSON regex with the s option keeps it', manual: `${M}operator/query/regex/#use-the-.-dot-character-to-match-new-line`, values: ['a\nb', 'ab', 'axb'], filter: { v: new BSONRegExp('^a.b$', 's') }, expect: [0, 2] },
  { name: '$regex with the x option ignores white space and comments', manual: `${M}operator/query/regex/#ignore-white-spaces-in-pattern`, values: ['abc', 'a b c', 'xabc'], filter: { v: { $regex: '^a b c # letters', $options: 'x' } }, expect: [0] },
  { name: '$regex with the m option anchors at each line', manual: `${M}operator/query/regex/#multiline-match-for-lines-starting-with-specified-pattern`, values: ['one\nSecond', 'Second', 'xSecond'], filter: { v: { $regex: '^S', $options: 'm' } }, expect: [0, 1] },
  { name: '$regex on an array of strings', manual: `${M}operator/query/regex/`, values: [['jazz', 'rock'], ['pop'], 'rockabilly', 42], filter: { v: { $regex: '^rock' } }, expect: [0, 2] },
  // $regex runs on PCRE2 (UTF mode, newline = LF), whose matching differs from JavaScript's
  { name: 'a dot matches \\r and U+2028: only \\n ends a line', manual: `${P}#SEC6`, values: ['a\rb', 'a\u2028b', 'a\nb'], filter: { v: { $regex: '^a.b$' } }, expect: [0, 1] },
  { name: '$ also matches before a final newline', manual: `${P}#SEC6`, values: ['yoga\n', 'yoga', 'yoga\n\n'], filter: { v: { $regex: 'yoga$' } }, expect: [0, 1] },
  { name: 'with m, lines break at \\n only, not \\r', manual: `${P}#SEC6`, values: ['a\rb', 'a\nb'], filter: { v: { $regex: '^b', $options: 'm' } }, expect: [1] },
  { name: '\\s is ASCII white space: not U+00A0', manual: `${P}#SEC5`, values: ['a\u00a0b', 'a b', 'a\u000bb'], filter: { v: { $regex: 'a\\sb' } }, expect: [1, 2] },
  { name: '\\v is any vertical white space', manual: `${P}#SEC5`, values: ['a\u2028b', 'a\nb', 'ab'], filter: { v: { $regex: 'a\\vb' } }, expect: [0, 1] },
  { name: '\\x{hhh} names a code point', manual: `${P}#SEC5`, values: ['☺', 'x'], filter: { v: { $regex: '^\\x{263A}$' } }, expect: [0] },
  { name: 'UTF mode: a dot is one character, even beyond the BMP', manual: `${P}#SEC6`, values: ['😀', 'ab'], filter: { v: { $regex: '^.$' } }, expect: [0] },
  { name: 'the x option keeps escaped white space and classes', manual: `${P}#SEC4`, values: ['a b', 'ab', 'a#b'], filter: { v: { $regex: '^a\\ b$|^a[#]b$ # comment', $options: 'x' } }, expect: [0, 2] },
  // $exists
  { name: '$exists: true includes null values', manual: `${M}operator/query/exists/`, values: [null, MISSING, 0, false], filter: { v: { $exists: true } }, expect: [0, 2, 3] },
  { name: '$exists: false', manual: `${M}operator/query/exists/`, values: [null, MISSING, 0], filter: { v: { $exists: false } }, expect: [1] },
  // $all and $size
  { name: '$all on an array field', manual: `${M}operator/query/all/`, values: [['a', 'b', 'c'], ['a', 'c'], ['b']], filter: { v: { $all: ['a', 'c'] } }, expect: [0, 1] },
  { name: '$all with one value matches a scalar field equal to it', manual: `${M}operator/query/all/#equivalent-to--and-operation`, values: [5, [5, 6], 6], filter: { v: { $all: [5] } }, expect: [0, 1] },
  { name: '$all with an empty array matches nothing', manual: `${M}operator/query/all/`, values: [[], ['a'], MISSING], filter: { v: { $all: [] } }, expect: [] },
  { name: '$size', manual: `${M}operator/query/size/`, values: [['a', 'b'], ['a'], 'ab', []], filter: { v: { $size: 2 } }, expect: [0] },
  { name: '$size 0 matches empty arrays only', manual: `${M}operator/query/size/`, values: [[], MISSING, null], filter: { v: { $size: 0 } }, expect: [0] },
  // $type
  { name: "$type 'number' matches every numeric type", manual: `${M}operator/query/type/#querying-by-data-type`, values: [new Int32(1), new Long(2), 2.5, Decimal128.fromString('1'), '1', [3, 'x']], filter: { v: { $type: 'number' } }, expect: [0, 1, 2, 3, 5] },
  { name: "$type 'string' matches string elements of arrays", manual: `${M}operator/query/type/#querying-by-array-type`, values: ['a', ['b', 1], 1, null], filter: { v: { $type: 'string' } }, expect: [0, 1] },
  { name: "$type 'array'", manual: `${M}operator/query/type/#querying-by-array-type`, values: [[], ['a'], 'a'], filter: { v: { $type: 'array' } }, expect: [0, 1] },
  // Paths into embedded documents and arrays of them
  { name: 'a dotted path reaches into an array of subdocuments', manual: 'https://www.mongodb.com/docs/manual/tutorial/query-array-of-documents/', docs: [{ _id: 0, subs: [{ session: oid(1) }, { session: oid(2) }] }, { _id: 1, subs: [{ session: oid(3) }] }, { _id: 2 }], filter: { 'subs.session': { $in: [oid(2), oid(9)] } }, expect: [0] },
  { name: '$elemMatch needs one element to satisfy every condition', manual: `${M}operator/query/elemMatch/`, docs: [{ _id: 0, r: [{ p: 'x', s: 10 }, { p: 'y', s: 5 }] }, { _id: 1, r: [{ p: 'x', s: 5 }, { p: 'y', s: 10 }] }], filter: { r: { $elemMatch: { p: 'x', s: { $gte: 8 } } } }, expect: [0] },
  { name: 'a dotted path missing in one element matches $exists: false only when missing everywhere', manual: `${M}operator/query/exists/`, docs: [{ _id: 0, a: [{ b: 1 }, { c: 1 }] }, { _id: 1, a: [{ c: 1 }] }, { _id: 2, a: { b: 2 } }], filter: { 'a.b': { $exists: false } }, expect: [1] },
  // Logical operators
  { name: '$or', manual: `${M}operator/query/or/`, values: [1, 2, 3, 'x'], filter: { $or: [{ v: 1 }, { v: { $gte: 3 } }] }, expect: [0, 2] },
  { name: '$and on the same field', manual: `${M}operator/query/and/`, values: [1, 5, 10], filter: { $and: [{ v: { $gt: 1 } }, { v: { $lt: 10 } }] }, expect: [1] },
  { name: '$or with an empty branch matches every document', manual: `${M}operator/query/or/`, values: [1, MISSING], filter: { $or: [{ v: 5 }, {}] }, expect: [0, 1] },
  { name: '$and of one empty branch matches every document', manual: `${M}operator/query/and/`, values: [1, MISSING], filter: { $and: [{}] }, expect: [0, 1] },
  { name: '$or nested in $and nested in $or', manual: `${M}operator/query/and/`, values: [1, 2, 3, 4, 'x'], filter: { $or: [{ $and: [{ $or: [{ v: 1 }, { v: 4 }] }, { v: { $lt: 3 } }] }, { v: 'x' }] }, expect: [0, 4] },
  { name: '$or beside a field condition: both must hold', manual: `${M}operator/query/or/`, values: [1, 2, 3], filter: { v: { $gt: 1 }, $or: [{ v: 1 }, { v: 3 }] }, expect: [2] },
  { name: '$nor matches documents without the field', manual: `${M}operator/query/nor/`, values: [1, 2, MISSING], filter: { $nor: [{ v: 1 }] }, expect: [1, 2] },
  { name: '$not matches missing and non-matching values', manual: `${M}operator/query/not/`, values: [1, 2, MISSING, 'x'], filter: { v: { $not: { $gt: 1 } } }, expect: [0, 2, 3] },
  // Sort order
  { name: 'ascending sort follows the BSON type order', manual: `${M}bson-type-comparison-order/`, values: [day('2024-01-01'), true, oid(1), new Binary(Buffer.from('x')), { a: 1 }, 'text', 42, null, new BSONRegExp('x', '')], sort: { v: 1 }, expect: [7, 6, 5, 4, 3, 2, 1, 0, 8] },
  { name: 'descending sort reverses the BSON type order', manual: `${M}bson-type-comparison-order/`, values: [day('2024-01-01'), true, oid(1), 'text', 42, null], sort: { v: -1 }, expect: [0, 1, 2, 3, 4, 5] },
  { name: 'null and missing sort first ascending, last descending', manual: `${M}bson-type-comparison-order/#non-existent-fields`, values: [2, MISSING, 1, null], sort: { v: 1, _id: 1 }, expect: [1, 3, 2, 0] },
  { name: 'null and missing sort last descending', manual: `${M}bson-type-comparison-order/#non-existent-fields`, values: [2, MISSING, 1, null], sort: { v: -1, _id: 1 }, expect: [0, 2, 1, 3] },
  { name: 'ascending sort uses the smallest element of an array', manual: `${M}bson-type-comparison-order/#arrays`, values: [[3, 9], [5], 4, [1, 100]], sort: { v: 1 }, expect: [3, 0, 2, 1] },
  { name: 'descending sort uses the largest element of an array', manual: `${M}bson-type-comparison-order/#arrays`, values: [[3, 9], [5], 4, [1, 100]], sort: { v: -1 }, expect: [3, 0, 1, 2] },
  { name: 'an empty array sorts before null and missing', manual: `${M}bson-type-comparison-order/#arrays`, values: [null, [], 1, MISSING], sort: { v: 1, _id: 1 }, expect: [1, 0, 3, 2] },
  { name: 'strings sort by binary comparison', manual: `${M}bson-type-comparison-order/#strings`, values: ['b', 'B', 'a', 'A', 'é'], sort: { v: 1 }, expect: [3, 1, 2, 0, 4] },
  { name: 'numbers of mixed BSON types sort by value', manual: `${M}bson-type-comparison-order/#numeric-types`, values: [new Long(3), 2.5, new Int32(1), Decimal128.fromString('2')], sort: { v: 1 }, expect: [2, 3, 1, 0] },
  { name: 'a compound sort orders ties by the next key', manual: `${M}method/cursor.sort/`, docs: [{ _id: 0, a: 1, b: 2 }, { _id: 1, a: 0, b: 9 }, { _id: 2, a: 1, b: 1 }, { _id: 3, a: 1, b: 2 }], sort: { a: -1, b: 1, _id: -1 }, expect: [2, 3, 0, 1] }
]
