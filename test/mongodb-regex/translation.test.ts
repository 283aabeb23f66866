// The stand-in matches as MongoDB does: every accepted pattern of the corpus, under several
// option sets, run by the stand-in's JavaScript translation and by PCRE2 10.42 on subjects
// chosen where the two engines differ (pcre2pattern: newlines, "Generic character types").
import t from 'tap'
import { readPattern } from '../../mongodb-regex/read-pattern.js'
import { testRegExp, toRegExp } from '../../offline-mongodb/regex.js'
import { pcre2OracleOrSkip } from '../helpers/pcre2-oracle.js'
import { ASTRAL_CLASSES, FLAG_SETS, MUST_ACCEPT, generatedPatterns } from './corpus.js'

const SUBJECTS = ['', 'a', 'ab', 'abc', 'AbC', 'b', 'ba', 'a\n', 'a\nb', '\na', 'a\r', 'a\rb', 'a\u2028b', 'a\u00a0b',
  'a b', ' \t', '\v', '\f',
  'é', 'É', 'café', '😀', 'a😀b', 'A', '☺', '2024-06-01', 'yoga flow', 'Ab1_', 'aaaa', 'abab', 'x\u0085y',
  '_', '.', '\u0001']

/** Characters at and around the ends of the ranges of ASTRAL_CLASSES, and some below U+FFFF. */
const ASTRAL_SUBJECTS = ['😀', '😃', '🙏', '🚀', '\u{1f5ff}', '\u{1f650}', '\u{10400}', '\u{10428}',
  '\u{10429}', '\u{1044f}', '\u{10450}', '\u{103ff}',
  '\u{10000}', '\u{10ffff}', '\uffff', 'a', 'b', 'x', '-', 'name 😀😃', 'name 😀😃🙏😀', 'a😀', '😀x',
  '😀😀', '']

/** JSON with non-ASCII escaped: a raw U+2028 in an assertion message would break the TAP stream. */
const show = (text: string): string =>
  JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

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
      ['^.$', '', '😀', true], // UTF mode: one character, not two code units
      ['^[😀-🙏]$', '', '😃', true], // and a class takes a whole character
      ['^[😀-🙏]$', '', 'a', false],
      ['^[😀-🙏]{2}$', '', '😀😃', true],
      ['^[^😀-🙏]$', '', '🚀', true],
      ['^[^😀-🙏]$', '', '😃', false],
      ['^[a-\\x{1F600}]$', '', '\u{1F5FF}', true],
      ['^[\\x{10400}-\\x{10410}]$', 'i', '\u{10428}', true] // Deseret's small letters fold to its capitals
    ]
    for (const [pattern, flags, subject, expected] of cases) {
      t.equal(await oracle.match(pattern, flags, subject), expected, `PCRE2: /${pattern}/${flags} on ${show(subject)}`)
      t.equal(testRegExp(toRegExp(pattern, flags), subject), expected,
        `stand-in: /${pattern}/${flags} on ${show(subject)}`)
    }
  })

  t.test('classes beyond U+FFFF match whole characters as PCRE2 does, with every option set', async (t) => {
    const differences: string[] = []
    for (const flags of FLAG_SETS) {
      for (const pattern of ASTRAL_CLASSES) {
        const re = toRegExp(pattern, flags)
        for (const subject of ASTRAL_SUBJECTS) {
          const expected = await oracle.match(pattern, flags, subject)
          if (expected === null || testRegExp(re, subject) !== expected) {
            differences.push(`${show(pattern)}/${flags} on ${show(subject)}: PCRE2 ${String(expected)}`)
          }
        }
      }
    }
    t.same(differences, [],
      `${ASTRAL_CLASSES.length} patterns × ${ASTRAL_SUBJECTS.length} subjects × ${FLAG_SETS.length} option sets`)
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
          if (expected !== null && testRegExp(re, subject) !== expected) {
            differences.push(`${show(pattern)}/${flags} on ${show(subject)}: PCRE2 ${String(expected)}`)
          }
        }
      }
    }
    t.comment(`${compared} pattern × subject comparisons`)
    t.ok(compared > 10_000, 'enough comparisons to mean something')
    t.same(differences.slice(0, 30), [], `${differences.length} differences`)
  })
}

// PCRE2 is never given half a character (MongoDB's strings are UTF-8), so only the stand-in is asked.
t.test('the stand-in\'s class beyond U+FFFF never takes a lone surrogate', async (t) => {
  const re = toRegExp('^[😀-🙏]$')
  for (const subject of ['\ud83d', '\ude03', '\ud83d\ud83d', '\ude03\ud83d']) {
    t.notOk(testRegExp(re, subject), show(subject))
  }
})
