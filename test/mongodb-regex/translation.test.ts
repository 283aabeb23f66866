// The stand-in matches as MongoDB does: every accepted pattern of the corpus, under several
// option sets, run by the stand-in's JavaScript translation and by PCRE2 10.42 on subjects
// chosen where the two engines differ (pcre2pattern: newlines, "Generic character types").
import t from 'tap'
import { readPattern } from '../../mongodb-regex/read-pattern.js'
import { testRegExp, toRegExp } from '../../offline-mongodb/regex.js'
import { pcre2OracleOrSkip } from '../helpers/pcre2-oracle.js'
import { FLAG_SETS, MUST_ACCEPT, generatedPatterns } from './corpus.js'

const SUBJECTS = ['', 'a', 'ab', 'abc', 'AbC', 'b', 'ba', 'a\n', 'a\nb', '\na', 'a\r', 'a\rb', 'a\u2028b', 'a\u00a0b', 'a b', ' \t', '\v', '\f',
  'é', 'É', 'café', '😀', 'a😀b', 'A', '☺', '2024-06-01', 'yoga flow', 'Ab1_', 'aaaa', 'abab', 'x\u0085y', '_', '.', '\u0001']

/** JSON with non-ASCII escaped: a raw U+2028 in an assertion message would break the TAP stream. */
const show = (text: string): string => JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

const oracle = pcre2OracleOrSkip(t, 'stand-in regex against PCRE2')
if (oracle !== undefined) {
  t.test('the differences the hostile-input report named match as in PCRE2', async (t) => {
    const cases: Array<[string, string, string, boolean]> = [
      ['^a.b$', '', 'a\rb', true], // `.` matches \r (only \n ends a line)
      ['^a.b$', '', 'a\u2028b', true], // and U+2028
      ['^a$', '', 'a\n', true], // `$` matches before a final newline
      ['^a$', '', 'a\n\n', false],
      ['a\\sb', '', 'a\u00a0b', false], // `\s` is ASCII white space
      ['a\\sb', '', 'a\u000bb', true],
      ['^b', 'm', 'a\rb', false], // with m, lines break at \n only
      ['^b', 'm', 'a\nb', true],
      ['a$', 'm', 'a\rb', false],
      ['\\v', '', '\u2028', true], // `\v` is vertical white space
      ['^\\x{263A}$', '', '☺', true],
      ['^.$', '', '😀', true] // UTF mode: one character, not two code units
    ]
    for (const [pattern, flags, subject, expected] of cases) {
      t.equal(await oracle.match(pattern, flags, subject), expected, `PCRE2: /${pattern}/${flags} on ${show(subject)}`)
      t.equal(testRegExp(toRegExp(pattern, flags), subject), expected, `stand-in: /${pattern}/${flags} on ${show(subject)}`)
    }
  })

  t.test('every accepted pattern of the corpus matches every subject as PCRE2 does', async (t) => {
    const corpus = [...new Set([...MUST_ACCEPT, ...generatedPatterns(400)])]
    const differences: string[] = []
    let compared = 0
    for (const flags of FLAG_SETS) {
      for (const pattern of corpus) {
        if (!readPattern(pattern, flags).ok) continue
        const re = toRegExp(pattern, flags)
        for (const subject of SUBJECTS) {
          const expected = await oracle.match(pattern, flags, subject)
          compared++
          if (expected !== null && testRegExp(re, subject) !== expected) differences.push(`${show(pattern)}/${flags} on ${show(subject)}: PCRE2 ${String(expected)}`)
        }
      }
    }
    t.comment(`${compared} pattern × subject comparisons`)
    t.ok(compared > 10_000, 'enough comparisons to mean something')
    t.same(differences.slice(0, 30), [], `${differences.length} differences`)
  })
}
