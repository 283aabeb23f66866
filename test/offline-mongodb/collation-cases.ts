// Collation cases in the conformance format: each expectation is the answer the MongoDB manual
// (or mongod's own jstests, named) gives; collation.test.ts runs them, against real MongoDB too
// when MONGODB_URI is set.
import type { CollationOptions, Document, Filter, Sort } from 'mongodb'
import type { ConformanceCase } from './conformance-cases.js'
import { MISSING } from './conformance-cases.js'

const M = 'https://www.mongodb.com/docs/manual/reference/'
/** The collation document and its fields. */
const C = `${M}collation/`
/** The collation document's table of fields. */
const DOC = `${C}#collation-document`
/** The comparison order of BSON types. */
const BSON = `${M}bson-type-comparison-order/`
/** db.collection.find()'s "Specify Collation" example (café, cafe, cafE). */
const FIND = `${M}method/db.collection.find/#specify-collation`
/** ICU's user guide on comparison levels, which the manual's `strength` and `alternate` point to. */
const ICU = 'https://unicode-org.github.io/icu/userguide/collation/concepts.html#comparison-levels'
const day = (iso: string): Date => new Date(`${iso}T00:00:00.000Z`)

/** A case that finds: the values of `v` (document i gets `_id: i`), the filter, its collation, the `_id`s found. */
const find = (
  name: string, manual: string, values: unknown[], filter: Filter<Document>, collation: CollationOptions,
  expect: number[]
): ConformanceCase => ({ name, manual, values, filter, collation, expect })
/** A case that sorts: as `find`, with the sort, and the `_id`s in order; no collation is binary comparison. */
const sort = (
  name: string, manual: string, values: unknown[], by: Sort, collation: CollationOptions | undefined,
  expect: number[]
): ConformanceCase => ({ name, manual, values, sort: by, ...(collation === undefined ? {} : { collation }), expect })

export const FRENCH_NAMES = ['Zoé', 'Émile', 'elodie', 'Élodie', 'de la Tour', 'Chloé', 'zoe']

export const collationCases: ConformanceCase[] = [
  // Equality: strength decides which differences count
  find('strength 1 ignores accents and case: "cafe" finds café, cafe and cafE', FIND,
    ['café', 'cafe', 'cafE', 'cafés'], { v: 'cafe' }, { locale: 'fr', strength: 1 }, [0, 1, 2]),
  find('strength 2 tells accents apart, not case', DOC,
    ['café', 'cafe', 'cafE'], { v: 'cafe' }, { locale: 'fr', strength: 2 }, [1, 2]),
  find('strength 3 (the default) is exact for case: "yoga" is not "Yoga"', DOC,
    ['Yoga', 'yoga', 'YOGA', 'yóga'], { v: 'yoga' }, { locale: 'en' }, [1]),
  find('caseLevel with strength 1: case counts, accents do not', DOC,
    ['resume', 'résumé', 'Resume'], { v: 'resume' }, { locale: 'en', strength: 1, caseLevel: true }, [0, 1]),
  find('caseLevel with strength 2: case and accents count', DOC,
    ['resume', 'résumé', 'Resume'], { v: 'resume' }, { locale: 'en', strength: 2, caseLevel: true }, [0]),
  find('$eq under strength 2', `${M}operator/query/eq/`,
    ['Music', 'music', 'musíc'], { v: { $eq: 'MUSIC' } }, { locale: 'en', strength: 2 }, [0, 1]),
  find('$in under strength 2', `${M}operator/query/in/`,
    ['Music', 'music', 'Musique', 'dance', 'DANCE', 'dancé', ['x', 'DANCE']], { v: { $in: ['MUSIC', 'dance'] } },
    { locale: 'en', strength: 2 }, [0, 1, 3, 4, 6]),
  find('$nin under strength 2 keeps documents without the field', `${M}operator/query/nin/`,
    ['Music', 'music', 'jazz', MISSING], { v: { $nin: ['MUSIC'] } }, { locale: 'en', strength: 2 }, [2, 3]),
  find('$ne under strength 2 (collation.js: {str: {$ne: "FOO"}})', `${M}operator/query/ne/`,
    ['foo', 'FOO', 'bar', MISSING], { v: { $ne: 'FOO' } }, { locale: 'en_US', strength: 2 }, [2, 3]),
  find('$all under strength 2', `${M}operator/query/all/`,
    [['A', 'b'], ['a'], ['B'], 'a'], { v: { $all: ['a', 'B'] } }, { locale: 'en', strength: 2 }, [0]),
  find('embedded-document equality compares string values by the collation, field names binary', DOC,
    [{ a: 'X' }, { a: 'x' }, { A: 'x' }, { a: 'x', b: 1 }], { v: { a: 'x' } }, { locale: 'en', strength: 2 }, [0, 1]),
  // Ranges: the collation's order, still within the string type bracket
  find('$gt/$lt on strings follow the collation: B lies between a and c', `${BSON}#strings`,
    ['a', 'B', 'c', 'D'], { v: { $gt: 'a', $lt: 'c' } }, { locale: 'en' }, [1]),
  find('$gte under a collation compares strings only, elements of arrays included', BSON,
    ['B', 5, null, ['c'], { x: 'd' }, 'a', MISSING], { v: { $gte: 'b' } }, { locale: 'en', strength: 1 }, [0, 3]),
  find('numericOrdering makes "10" greater than "2"', DOC,
    ['10', '2', '9', '100'], { v: { $gt: '9' } }, { locale: 'en', numericOrdering: true }, [0, 3]),
  // What the collation does not touch
  find('$regex ignores the collation', `${M}operator/query/regex/`,
    ['Yoga', 'yoga', 'yóga'], { v: { $regex: '^yoga$' } }, { locale: 'en', strength: 1 }, [1]),
  find('numbers compare as numbers under any collation', `${BSON}#numeric-types`,
    [5, '5', 5.0, 50, '05'], { v: 5 }, { locale: 'en', strength: 1, numericOrdering: true }, [0, 2]),
  find('dates compare as dates under a collation', BSON,
    [day('2024-06-01'), day('2024-06-02'), '2024-06-01'], { v: { $gte: day('2024-06-01') } },
    { locale: 'en', strength: 1 }, [0, 1]),
  find('an $elemMatch compares its strings by the collation', `${M}operator/query/elemMatch/`,
    [['Apple', 'pear'], ['APPLE'], ['Äpple'], 'apple'], { v: { $elemMatch: { $eq: 'apple' } } },
    { locale: 'en', strength: 2 }, [0, 1]),
  find('an $elemMatch under strength 1 ignores the umlaut too', `${M}operator/query/elemMatch/`,
    [['Apple', 'pear'], ['APPLE'], ['Äpple'], 'apple'], { v: { $elemMatch: { $eq: 'apple' } } },
    { locale: 'en', strength: 1 }, [0, 1, 2]),
  // Sort
  sort('numericOrdering sorts digit runs as numbers, not signs or decimals (the manual\'s example)',
    `${C}#numericordering`, ['1', '2', '2.1', '-2.1', '2.2', '2.10', '2.20', '-10', '10', '20', '20.1'], { v: 1 },
    { locale: 'en_US', numericOrdering: true }, [3, 7, 0, 1, 2, 4, 5, 6, 8, 9, 10]),
  sort('caseFirst upper sorts uppercase before lowercase', DOC,
    ['b', 'B', 'a', 'A'], { v: 1 }, { locale: 'en', caseFirst: 'upper' }, [3, 2, 1, 0]),
  sort('caseFirst lower sorts lowercase before uppercase', DOC,
    ['b', 'B', 'a', 'A'], { v: 1 }, { locale: 'en', caseFirst: 'lower' }, [2, 3, 0, 1]),
  sort('Danish sorts uppercase first by default, and å after z',
    `${M}collation-locales-defaults/#collation-default-parameters`, ['b', 'B', 'å', 'z'], { v: 1 }, { locale: 'da' },
    [1, 0, 3, 2]),
  sort('alternate shifted ignores spaces and punctuation: di Silva = diSilva < Di Silva < U.S.A. = USA', ICU,
    ['USA', 'Di Silva', 'diSilva', 'U.S.A.', 'di Silva'], { v: 1, _id: 1 }, { locale: 'en', alternate: 'shifted' },
    [2, 4, 1, 0, 3]),
  find('alternate shifted: "diSilva" finds "di Silva"', ICU,
    ['di Silva', 'diSilva', 'Di Silva'], { v: 'diSilva' }, { locale: 'en', alternate: 'shifted' }, [0, 1]),
  sort('French sorts names by letters first, then accents, then case', `${M}collation-locales-defaults/`,
    FRENCH_NAMES, { v: 1 }, { locale: 'fr' }, [5, 4, 2, 3, 1, 6, 0]),
  sort('fr_CA compares accents from the end (backwards): cote < côte < coté < côté', DOC,
    ['cote', 'coté', 'côte', 'côté'], { v: 1 }, { locale: 'fr_CA' }, [0, 2, 1, 3]),
  sort('fr compares accents from the front: cote < coté < côte < côté', DOC,
    ['côté', 'côte', 'coté', 'cote'], { v: 1 }, { locale: 'fr' }, [3, 2, 1, 0]),
  sort('backwards: true on a root locale orders as fr_CA', DOC,
    ['cote', 'coté', 'côte', 'côté'], { v: -1 }, { locale: 'en', backwards: true }, [3, 1, 2, 0]),
  sort('strength 1 sorts equals by the next key', `${M}method/cursor.sort/`,
    ['b', 'A', 'a', 'á', 'B'], { v: 1, _id: -1 }, { locale: 'en', strength: 1 }, [3, 2, 1, 4, 0]),
  sort('strength 5 keeps the tertiary order of case and width variants: a < ａ < A', DOC,
    ['a', 'A', 'ａ'], { v: 1 }, { locale: 'en', strength: 5 }, [0, 2, 1]),
  find('a zero width space is ignorable up to strength 4', ICU,
    ['a\u200b', 'a', 'b'], { v: 'a' }, { locale: 'en', strength: 4 }, [0, 1]),
  find('identical strength 5 tells apart what the other levels ignore', ICU,
    ['a\u200b', 'a', 'b'], { v: 'a' }, { locale: 'en', strength: 5 }, [1]),
  sort('strings inside embedded documents sort by the collation', `${BSON}#objects`,
    [{ a: 'b' }, { a: 'A' }, { a: 'a' }], { v: 1 }, { locale: 'en' }, [2, 1, 0]),
  sort('an array sorts by its smallest element under the collation', `${BSON}#arrays`,
    [['b', 'Z'], ['a'], ['C', 'y']], { v: 1 }, { locale: 'en' }, [1, 0, 2]),
  sort('without a collation the same arrays sort by binary smallest elements', `${BSON}#arrays`,
    [['b', 'Z'], ['a'], ['C', 'y']], { v: 1 }, undefined, [2, 0, 1]),
  sort('descending sort takes an array\'s largest element under the collation', `${BSON}#arrays`,
    [['b', 'Z'], ['a'], ['C', 'y']], { v: -1 }, { locale: 'en' }, [0, 2, 1]),
  sort('types keep their BSON order under a collation', BSON,
    ['b', 2, 'A', null, true], { v: 1 }, { locale: 'en', strength: 1 }, [3, 1, 2, 0, 4]),
  sort('{locale: "simple"} is binary comparison', DOC,
    ['b', 'B', 'a', 'A'], { v: 1 }, { locale: 'simple' }, [3, 1, 2, 0])
]
