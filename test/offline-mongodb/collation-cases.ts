// Collation cases in the conformance format: each expectation is the answer the MongoDB manual
// (or mongod's own jstests, named) gives; collation.test.ts runs them, against real MongoDB too
// when MONGODB_URI is set.
import type { ConformanceCase } from './conformance-cases.js'
import { MISSING } from './conformance-cases.js'

const M = 'https://www.mongodb.com/docs/manual/reference/'
/** The collation document and its fields. */
const C = `${M}collation/`
/** db.collection.find()'s "Specify Collation" example (café, cafe, cafE). */
const FIND = `${M}method/db.collection.find/#specify-collation`
/** ICU's user guide on comparison levels, which the manual's `strength` and `alternate` point to. */
const ICU = 'https://unicode-org.github.io/icu/userguide/collation/concepts.html#comparison-levels'
const day = (iso: string): Date => new Date(`${iso}T00:00:00.000Z`)

export const FRENCH_NAMES = ['Zoé', 'Émile', 'elodie', 'Élodie', 'de la Tour', 'Chloé', 'zoe']

export const collationCases: ConformanceCase[] = [
  // Equality: strength decides which differences count
  { name: 'strength 1 ignores accents and case: "cafe" finds café, cafe and cafE', manual: FIND, values: ['café', 'cafe', 'cafE', 'cafés'], filter: { v: 'cafe' }, collation: { locale: 'fr', strength: 1 }, expect: [0, 1, 2] },
  { name: 'strength 2 tells accents apart, not case', manual: `${C}#collation-document`, values: ['café', 'cafe', 'cafE'], filter: { v: 'cafe' }, collation: { locale: 'fr', strength: 2 }, expect: [1, 2] },
  { name: 'strength 3 (the default) is exact for case: "yoga" is not "Yoga"', manual: `${C}#collation-document`, values: ['Yoga', 'yoga', 'YOGA', 'yóga'], filter: { v: 'yoga' }, collation: { locale: 'en' }, expect: [1] },
  { name: 'caseLevel with strength 1: case counts, accents do not', manual: `${C}#collation-document`, values: ['resume', 'résumé', 'Resume'], filter: { v: 'resume' }, collation: { locale: 'en', strength: 1, caseLevel: true }, expect: [0, 1] },
  { name: 'caseLevel with strength 2: case and accents count', manual: `${C}#collation-document`, values: ['resume', 'résumé', 'Resume'], filter: { v: 'resume' }, collation: { locale: 'en', strength: 2, caseLevel: true }, expect: [0] },
  { name: '$eq under strength 2', manual: `${M}operator/query/eq/`, values: ['Music', 'music', 'musíc'], filter: { v: { $eq: 'MUSIC' } }, collation: { locale: 'en', strength: 2 }, expect: [0, 1] },
  { name: '$in under strength 2', manual: `${M}operator/query/in/`, values: ['Music', 'music', 'Musique', 'dance', 'DANCE', 'dancé', ['x', 'DANCE']], filter: { v: { $in: ['MUSIC', 'dance'] } }, collation: { locale: 'en', strength: 2 }, expect: [0, 1, 3, 4, 6] },
  { name: '$nin under strength 2 keeps documents without the field', manual: `${M}operator/query/nin/`, values: ['Music', 'music', 'jazz', MISSING], filter: { v: { $nin: ['MUSIC'] } }, collation: { locale: 'en', strength: 2 }, expect: [2, 3] },
  { name: '$ne under strength 2 (collation.js: {str: {$ne: "FOO"}})', manual: `${M}operator/query/ne/`, values: ['foo', 'FOO', 'bar', MISSING], filter: { v: { $ne: 'FOO' } }, collation: { locale: 'en_US', strength: 2 }, expect: [2, 3] },
  { name: '$all under strength 2', manual: `${M}operator/query/all/`, values: [['A', 'b'], ['a'], ['B'], 'a'], filter: { v: { $all: ['a', 'B'] } }, collation: { locale: 'en', strength: 2 }, expect: [0] },
  { name: 'embedded-document equality compares string values by the collation, field names binary', manual: `${C}#collation-document`, values: [{ a: 'X' }, { a: 'x' }, { A: 'x' }, { a: 'x', b: 1 }], filter: { v: { a: 'x' } }, collation: { locale: 'en', strength: 2 }, expect: [0, 1] },
  // Ranges: the collation's order, still within the string type bracket
  { name: '$gt/$lt on strings follow the collation: B lies between a and c', manual: `${M}bson-type-comparison-order/#strings`, values: ['a', 'B', 'c', 'D'], filter: { v: { $gt: 'a', $lt: 'c' } }, collation: { locale: 'en' }, expect: [1] },
  { name: '$gte under a collation compares strings only, elements of arrays included', manual: `${M}bson-type-comparison-order/`, values: ['B', 5, null, ['c'], { x: 'd' }, 'a', MISSING], filter: { v: { $gte: 'b' } }, collation: { locale: 'en', strength: 1 }, expect: [0, 3] },
  { name: 'numericOrdering makes "10" greater than "2"', manual: `${C}#collation-document`, values: ['10', '2', '9', '100'], filter: { v: { $gt: '9' } }, collation: { locale: 'en', numericOrdering: true }, expect: [0, 3] },
  // What the collation does not touch
  { name: '$regex ignores the collation', manual: `${M}operator/query/regex/`, values: ['Yoga', 'yoga', 'yóga'], filter: { v: { $regex: '^yoga$' } }, collation: { locale: 'en', strength: 1 }, expect: [1] },
  { name: 'numbers compare as numbers under any collation', manual: `${M}bson-type-comparison-order/#numeric-types`, values: [5, '5', 5.0, 50, '05'], filter: { v: 5 }, collation: { locale: 'en', strength: 1, numericOrdering: true }, expect: [0, 2] },
  { name: 'dates compare as dates under a collation', manual: `${M}bson-type-comparison-order/`, values: [day('2024-06-01'), day('2024-06-02'), '2024-06-01'], filter: { v: { $gte: day('2024-06-01') } }, collation: { locale: 'en', strength: 1 }, expect: [0, 1] },
  { name: 'an $elemMatch compares its strings by the collation', manual: `${M}operator/query/elemMatch/`, values: [['Apple', 'pear'], ['APPLE'], ['Äpple'], 'apple'], filter: { v: { $elemMatch: { $eq: 'apple' } } }, collation: { locale: 'en', strength: 2 }, expect: [0, 1] },
  { name: 'an $elemMatch under strength 1 ignores the umlaut too', manual: `${M}operator/query/elemMatch/`, values: [['Apple', 'pear'], ['APPLE'], ['Äpple'], 'apple'], filter: { v: { $elemMatch: { $eq: 'apple' } } }, collation: { locale: 'en', strength: 1 }, expect: [0, 1, 2] },
  // Sort
  { name: 'numericOrdering sorts digit runs as numbers, not signs or decimals (the manual\'s example)', manual: `${C}#numericordering`, values: ['1', '2', '2.1', '-2.1', '2.2', '2.10', '2.20', '-10', '10', '20', '20.1'], sort: { v: 1 }, collation: { locale: 'en_US', numericOrdering: true }, expect: [3, 7, 0, 1, 2, 4, 5, 6, 8, 9, 10] },
  { name: 'caseFirst upper sorts uppercase before lowercase', manual: `${C}#collation-document`, values: ['b', 'B', 'a', 'A'], sort: { v: 1 }, collation: { locale: 'en', caseFirst: 'upper' }, expect: [3, 2, 1, 0] },
  { name: 'caseFirst lower sorts lowercase before uppercase', manual: `${C}#collation-document`, values: ['b', 'B', 'a', 'A'], sort: { v: 1 }, collation: { locale: 'en', caseFirst: 'lower' }, expect: [2, 3, 0, 1] },
  { name: 'Danish sorts uppercase first by default, and å after z', manual: `${M}collation-locales-defaults/#collation-default-parameters`, values: ['b', 'B', 'å', 'z'], sort: { v: 1 }, collation: { locale: 'da' }, expect: [1, 0, 3, 2] },
  { name: 'alternate shifted ignores spaces and punctuation: di Silva = diSilva < Di Silva < U.S.A. = USA', manual: ICU, values: ['USA', 'Di Silva', 'diSilva', 'U.S.A.', 'di Silva'], sort: { v: 1, _id: 1 }, collation: { locale: 'en', alternate: 'shifted' }, expect: [2, 4, 1, 0, 3] },
  { name: 'alternate shifted: "diSilva" finds "di Silva"', manual: ICU, values: ['di Silva', 'diSilva', 'Di Silva'], filter: { v: 'diSilva' }, collation: { locale: 'en', alternate: 'shifted' }, expect: [0, 1] },
  { name: 'French sorts names by letters first, then accents, then case', manual: `${M}collation-locales-defaults/`, values: FRENCH_NAMES, sort: { v: 1 }, collation: { locale: 'fr' }, expect: [5, 4, 2, 3, 1, 6, 0] },
  { name: 'fr_CA compares accents from the end (backwards): cote < côte < coté < côté', manual: `${C}#collation-document`, values: ['cote', 'coté', 'côte', 'côté'], sort: { v: 1 }, collation: { locale: 'fr_CA' }, expect: [0, 2, 1, 3] },
  { name: 'fr compares accents from the front: cote < coté < côte < côté', manual: `${C}#collation-document`, values: ['côté', 'côte', 'coté', 'cote'], sort: { v: 1 }, collation: { locale: 'fr' }, expect: [3, 2, 1, 0] },
  { name: 'backwards: true on a root locale orders as fr_CA', manual: `${C}#collation-document`, values: ['cote', 'coté', 'côte', 'côté'], sort: { v: -1 }, collation: { locale: 'en', backwards: true }, expect: [3, 1, 2, 0] },
  { name: 'strength 1 sorts equals by the next key', manual: `${M}method/cursor.sort/`, values: ['b', 'A', 'a', 'á', 'B'], sort: { v: 1, _id: -1 }, collation: { locale: 'en', strength: 1 }, expect: [3, 2, 1, 4, 0] },
  { name: 'strength 5 keeps the tertiary order of case and width variants: a < ａ < A', manual: `${C}#collation-document`, values: ['a', 'A', 'ａ'], sort: { v: 1 }, collation: { locale: 'en', strength: 5 }, expect: [0, 2, 1] },
  { name: 'a zero width space is ignorable up to strength 4', manual: ICU, values: ['a\u200b', 'a', 'b'], filter: { v: 'a' }, collation: { locale: 'en', strength: 4 }, expect: [0, 1] },
  { name: 'identical strength 5 tells apart what the other levels ignore', manual: ICU, values: ['a\u200b', 'a', 'b'], filter: { v: 'a' }, collation: { locale: 'en', strength: 5 }, expect: [1] },
  { name: 'strings inside embedded documents sort by the collation', manual: `${M}bson-type-comparison-order/#objects`, values: [{ a: 'b' }, { a: 'A' }, { a: 'a' }], sort: { v: 1 }, collation: { locale: 'en' }, expect: [2, 1, 0] },
  { name: 'an array sorts by its smallest element under the collation', manual: `${M}bson-type-comparison-order/#arrays`, values: [['b', 'Z'], ['a'], ['C', 'y']], sort: { v: 1 }, collation: { locale: 'en' }, expect: [1, 0, 2] },
  { name: 'without a collation the same arrays sort by binary smallest elements', manual: `${M}bson-type-comparison-order/#arrays`, values: [['b', 'Z'], ['a'], ['C', 'y']], sort: { v: 1 }, expect: [2, 0, 1] },
  { name: 'descending sort takes an array\'s largest element under the collation', manual: `${M}bson-type-comparison-order/#arrays`, values: [['b', 'Z'], ['a'], ['C', 'y']], sort: { v: -1 }, collation: { locale: 'en' }, expect: [0, 2, 1] },
  { name: 'types keep their BSON order under a collation', manual: `${M}bson-type-comparison-order/`, values: ['b', 2, 'A', null, true], sort: { v: 1 }, collation: { locale: 'en', strength: 1 }, expect: [3, 1, 2, 0, 4] },
  { name: '{locale: "simple"} is binary comparison', manual: `${C}#collation-document`, values: ['b', 'B', 'a', 'A'], sort: { v: 1 }, collation: { locale: 'simple' }, expect: [3, 1, 2, 0] }
]
