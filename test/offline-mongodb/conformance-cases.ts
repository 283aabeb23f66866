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

/** The manual's page on a query operator, at an anchor: `op('ne', '#arrays')`. */
const op = (name: string, anchor = ''): string => `${M}operator/query/${name}/${anchor}`
/** The manual's page on the BSON comparison and sort order, at an anchor. */
const order = (anchor = ''): string => `${M}bson-type-comparison-order/${anchor}`

/** A case that filters documents made of `values` (see ConformanceCase). */
const c = (
  name: string, manual: string, values: unknown[], filter: Filter<Document>, expect: number[]
): ConformanceCase => ({ name, manual, values, filter, expect })
/** A case that filters whole documents. */
const withDocs = (
  name: string, manual: string, docs: Document[], filter: Filter<Document>, expect: number[]
): ConformanceCase => ({ name, manual, docs, filter, expect })
/** A case that sorts documents made of `values`: `expect` in the order the sort gives. */
const sorted = (
  name: string, manual: string, values: unknown[], sort: Sort, expect: number[]
): ConformanceCase => ({ name, manual, values, sort, expect })

export const cases: ConformanceCase[] = [
  // $eq and implicit equality
  c('$eq on a string', op('eq'), ['yoga', 'Yoga', 'yoga class'], { v: { $eq: 'yoga' } }, [0]),
  c('equality matches an array element', op('eq', '#array-element-equals-a-value'),
    [['a', 'b'], ['c'], 'a'], { v: 'a' }, [0, 2]),
  c('equality with an array matches the whole array, in order', op('eq', '#equals-an-array-value'),
    [['a', 'b'], ['b', 'a'], [['a', 'b']]], { v: ['a', 'b'] }, [0, 2]),
  c('embedded-document equality depends on field order', op('eq', '#equals-an-embedded-document'),
    [{ a: 1, b: 2 }, { b: 2, a: 1 }, { a: 1, b: 2, c: 3 }], { v: { a: 1, b: 2 } }, [0]),
  c('numbers of every BSON type compare by value', order('#numeric-types'),
    [new Int32(5), new Long(5), new Double(5), Decimal128.fromString('5'), '5', 5.5], { v: 5 }, [0, 1, 2, 3]),
  c('equality with null matches null and missing', op('eq'), [null, MISSING, 0, ''], { v: null }, [0, 1]),
  c('$eq on ObjectId', op('eq'), [oid(1), oid(2), oid(1).toHexString()], { v: oid(1) }, [0]),
  c('$eq on a date', op('eq'), [day('2024-06-01'), day('2024-06-02'), '2024-06-01'], { v: day('2024-06-01') }, [0]),
  // $ne
  c('$ne matches documents without the field', op('ne'), ['a', 'b', MISSING, null], { v: { $ne: 'a' } }, [1, 2, 3]),
  c('$ne on an array field excludes arrays holding the value', op('ne', '#arrays'),
    [['a', 'b'], ['b'], 'a'], { v: { $ne: 'a' } }, [1]),
  // Range operators and type bracketing
  c('$gt only compares within the type bracket', order(),
    [10, '10', day('2024-01-01'), true, 3, null, MISSING], { v: { $gt: 5 } }, [0]),
  c('$gte/$lt on dates', op('gte'),
    [day('2024-05-31'), day('2024-06-01'), day('2024-06-15'), day('2024-07-01'), '2024-06-10'],
    { v: { $gte: day('2024-06-01'), $lt: day('2024-07-01') } }, [1, 2]),
  c('a Long beyond 2^53 compares exactly with a double', order('#numeric-types'),
    [Long.fromString('9007199254740993'), Long.fromString('9007199254740992')], { v: { $gt: 9007199254740992 } }, [0]),
  c('$lt on strings is a binary comparison', order('#strings'), ['B', 'a', 'b', 'A'], { v: { $lt: 'a' } }, [0, 3]),
  c('$gt on an array field matches when any element does', op('gt'),
    [[1, 10], [1, 2], 7, []], { v: { $gt: 5 } }, [0, 2]),
  c('$lte on ObjectId', op('lte'), [oid(1), oid(2), oid(3), 'x'], { v: { $lte: oid(2) } }, [0, 1]),
  c('$gt and $lt on Decimal128 and doubles', order('#numeric-types'),
    [Decimal128.fromString('1.5'), 2.5, new Int32(2), Decimal128.fromString('3')], { v: { $gt: 1.5, $lt: 3 } }, [1, 2]),
  // $in / $nin
  c('$in on scalars and arrays', op('in'),
    ['music', ['dance', 'x'], 'theatre', ['x']], { v: { $in: ['music', 'dance'] } }, [0, 1]),
  c('$in with a regular expression', op('in', '#use-the--in-operator-with-a-regular-expression'),
    ['bee', 'be', 'Bee', 'see'], { v: { $in: [/^be/, 'see'] } }, [0, 1, 3]),
  c('$in with null matches null and missing', op('in'), [null, MISSING, 'x'], { v: { $in: [null] } }, [0, 1]),
  c('$nin matches documents without the field', op('nin'),
    ['a', 'b', MISSING, ['a', 'c']], { v: { $nin: ['a'] } }, [1, 2]),
  c('$in with ObjectIds', op('in'), [oid(1), [oid(2), oid(9)], oid(3)], { v: { $in: [oid(1), oid(2)] } }, [0, 1]),
  // $regex
  c('$regex with the i option', op('regex', '#perform-case-insensitive-regular-expression-match'),
    ['Yoga', 'yoga', 'YOGA flow', 'pilates'], { v: { $regex: 'yoga', $options: 'i' } }, [0, 1, 2]),
  c('$regex with the s option lets a dot match a newline', op('regex', '#use-the-.-dot-character-to-match-new-line'),
    ['a\nb', 'ab', 'axb'], { v: { $regex: '^a.b$', $options: 's' } }, [0, 2]),
  c('a BSON regex with the s option keeps it', op('regex', '#use-the-.-dot-character-to-match-new-line'),
    ['a\nb', 'ab', 'axb'], { v: new BSONRegExp('^a.b$', 's') }, [0, 2]),
  c('$regex with the x option ignores white space and comments', op('regex', '#ignore-white-spaces-in-pattern'),
    ['abc', 'a b c', 'xabc'], { v: { $regex: '^a b c # letters', $options: 'x' } }, [0]),
  c('$regex with the m option anchors at each line',
    op('regex', '#multiline-match-for-lines-starting-with-specified-pattern'),
    ['one\nSecond', 'Second', 'xSecond'], { v: { $regex: '^S', $options: 'm' } }, [0, 1]),
  c('$regex on an array of strings', op('regex'),
    [['jazz', 'rock'], ['pop'], 'rockabilly', 42], { v: { $regex: '^rock' } }, [0, 2]),
  // $regex runs on PCRE2 (UTF mode, newline = LF), whose matching differs from JavaScript's
  c('a dot matches \\r and U+2028: only \\n ends a line', `${P}#SEC6`,
    ['a\rb', 'a\u2028b', 'a\nb'], { v: { $regex: '^a.b$' } }, [0, 1]),
  c('$ also matches before a final newline', `${P}#SEC6`,
    ['yoga\n', 'yoga', 'yoga\n\n'], { v: { $regex: 'yoga$' } }, [0, 1]),
  c('with m, lines break at \\n only, not \\r', `${P}#SEC6`,
    ['a\rb', 'a\nb'], { v: { $regex: '^b', $options: 'm' } }, [1]),
  c('\\s is ASCII white space: not U+00A0', `${P}#SEC5`,
    ['a\u00a0b', 'a b', 'a\u000bb'], { v: { $regex: 'a\\sb' } }, [1, 2]),
  c('\\v is any vertical white space', `${P}#SEC5`, ['a\u2028b', 'a\nb', 'ab'], { v: { $regex: 'a\\vb' } }, [0, 1]),
  c('\\x{hhh} names a code point', `${P}#SEC5`, ['☺', 'x'], { v: { $regex: '^\\x{263A}$' } }, [0]),
  c('UTF mode: a dot is one character, even beyond the BMP', `${P}#SEC6`, ['😀', 'ab'], { v: { $regex: '^.$' } }, [0]),
  c('the x option keeps escaped white space and classes', `${P}#SEC4`,
    ['a b', 'ab', 'a#b'], { v: { $regex: '^a\\ b$|^a[#]b$ # comment', $options: 'x' } }, [0, 2]),
  // $exists
  c('$exists: true includes null values', op('exists'), [null, MISSING, 0, false], { v: { $exists: true } }, [0, 2, 3]),
  c('$exists: false', op('exists'), [null, MISSING, 0], { v: { $exists: false } }, [1]),
  // $all and $size
  c('$all on an array field', op('all'), [['a', 'b', 'c'], ['a', 'c'], ['b']], { v: { $all: ['a', 'c'] } }, [0, 1]),
  c('$all with one value matches a scalar field equal to it', op('all', '#equivalent-to--and-operation'),
    [5, [5, 6], 6], { v: { $all: [5] } }, [0, 1]),
  c('$all with an empty array matches nothing', op('all'), [[], ['a'], MISSING], { v: { $all: [] } }, []),
  c('$size', op('size'), [['a', 'b'], ['a'], 'ab', []], { v: { $size: 2 } }, [0]),
  c('$size 0 matches empty arrays only', op('size'), [[], MISSING, null], { v: { $size: 0 } }, [0]),
  // $type
  c("$type 'number' matches every numeric type", op('type', '#querying-by-data-type'),
    [new Int32(1), new Long(2), 2.5, Decimal128.fromString('1'), '1', [3, 'x']],
    { v: { $type: 'number' } }, [0, 1, 2, 3, 5]),
  c("$type 'string' matches string elements of arrays", op('type', '#querying-by-array-type'),
    ['a', ['b', 1], 1, null], { v: { $type: 'string' } }, [0, 1]),
  c("$type 'array'", op('type', '#querying-by-array-type'), [[], ['a'], 'a'], { v: { $type: 'array' } }, [0, 1]),
  // Paths into embedded documents and arrays of them
  withDocs('a dotted path reaches into an array of subdocuments',
    'https://www.mongodb.com/docs/manual/tutorial/query-array-of-documents/',
    [{ _id: 0, subs: [{ session: oid(1) }, { session: oid(2) }] }, { _id: 1, subs: [{ session: oid(3) }] }, { _id: 2 }],
    { 'subs.session': { $in: [oid(2), oid(9)] } }, [0]),
  withDocs('$elemMatch needs one element to satisfy every condition', op('elemMatch'),
    [{ _id: 0, r: [{ p: 'x', s: 10 }, { p: 'y', s: 5 }] }, { _id: 1, r: [{ p: 'x', s: 5 }, { p: 'y', s: 10 }] }],
    { r: { $elemMatch: { p: 'x', s: { $gte: 8 } } } }, [0]),
  withDocs('a dotted path missing in one element matches $exists: false only when missing everywhere', op('exists'),
    [{ _id: 0, a: [{ b: 1 }, { c: 1 }] }, { _id: 1, a: [{ c: 1 }] }, { _id: 2, a: { b: 2 } }],
    { 'a.b': { $exists: false } }, [1]),
  // Logical operators
  c('$or', op('or'), [1, 2, 3, 'x'], { $or: [{ v: 1 }, { v: { $gte: 3 } }] }, [0, 2]),
  c('$and on the same field', op('and'), [1, 5, 10], { $and: [{ v: { $gt: 1 } }, { v: { $lt: 10 } }] }, [1]),
  c('$or with an empty branch matches every document', op('or'), [1, MISSING], { $or: [{ v: 5 }, {}] }, [0, 1]),
  c('$and of one empty branch matches every document', op('and'), [1, MISSING], { $and: [{}] }, [0, 1]),
  c('$or nested in $and nested in $or', op('and'),
    [1, 2, 3, 4, 'x'], { $or: [{ $and: [{ $or: [{ v: 1 }, { v: 4 }] }, { v: { $lt: 3 } }] }, { v: 'x' }] }, [0, 4]),
  c('$or beside a field condition: both must hold', op('or'),
    [1, 2, 3], { v: { $gt: 1 }, $or: [{ v: 1 }, { v: 3 }] }, [2]),
  c('$nor matches documents without the field', op('nor'), [1, 2, MISSING], { $nor: [{ v: 1 }] }, [1, 2]),
  c('$not matches missing and non-matching values', op('not'),
    [1, 2, MISSING, 'x'], { v: { $not: { $gt: 1 } } }, [0, 2, 3]),
  // Sort order
  sorted('ascending sort follows the BSON type order', order(),
    [day('2024-01-01'), true, oid(1), new Binary(Buffer.from('x')), { a: 1 }, 'text', 42, null,
      new BSONRegExp('x', '')],
    { v: 1 }, [7, 6, 5, 4, 3, 2, 1, 0, 8]),
  sorted('descending sort reverses the BSON type order', order(),
    [day('2024-01-01'), true, oid(1), 'text', 42, null], { v: -1 }, [0, 1, 2, 3, 4, 5]),
  sorted('null and missing sort first ascending, last descending', order('#non-existent-fields'),
    [2, MISSING, 1, null], { v: 1, _id: 1 }, [1, 3, 2, 0]),
  sorted('null and missing sort last descending', order('#non-existent-fields'),
    [2, MISSING, 1, null], { v: -1, _id: 1 }, [0, 2, 1, 3]),
  sorted('ascending sort uses the smallest element of an array', order('#arrays'),
    [[3, 9], [5], 4, [1, 100]], { v: 1 }, [3, 0, 2, 1]),
  sorted('descending sort uses the largest element of an array', order('#arrays'),
    [[3, 9], [5], 4, [1, 100]], { v: -1 }, [3, 0, 1, 2]),
  sorted('an empty array sorts before null and missing', order('#arrays'),
    [null, [], 1, MISSING], { v: 1, _id: 1 }, [1, 0, 3, 2]),
  sorted('strings sort by binary comparison', order('#strings'), ['b', 'B', 'a', 'A', 'é'], { v: 1 }, [3, 1, 2, 0, 4]),
  sorted('numbers of mixed BSON types sort by value', order('#numeric-types'),
    [new Long(3), 2.5, new Int32(1), Decimal128.fromString('2')], { v: 1 }, [2, 3, 1, 0]),
  {
    name: 'a compound sort orders ties by the next key',
    manual: `${M}method/cursor.sort/`,
    docs: [{ _id: 0, a: 1, b: 2 }, { _id: 1, a: 0, b: 9 }, { _id: 2, a: 1, b: 1 }, { _id: 3, a: 1, b: 2 }],
    sort: { a: -1, b: 1, _id: -1 },
    expect: [2, 3, 0, 1]
  }
]
