// With `i`, the safety analysis compares characters as PCRE2 does in UTF mode: each literal and class
// stands for all its case-equivalents, while `\w`, `\W`, `\d`, `\s` keep their own characters
// (pcre2pattern, "Characters and metacharacters"). pcre2-oracle.test.ts holds these sets to PCRE2.
import t from 'tap'
import { JS } from 'refa'
import { analysedPattern } from '../../mongodb-regex/analysed-pattern.js'
import { readPattern } from '../../mongodb-regex/read-pattern.js'
import { analysedChars } from './analysed-chars.js'

t.test('JavaScript\'s i without the u flag never joins what PCRE2 keeps apart, for any code unit', async (t) => {
  const wider: string[] = []
  for (let unit = 0; unit <= 0xffff; unit++) {
    const javaScript = JS.createCharSet([unit], { unicode: false, ignoreCase: true })
    const pcre2 = JS.createCharSet([unit], { unicode: true, ignoreCase: true })
      .intersect({ min: 0, max: 0xffff }).resize(0xffff)
    if (!javaScript.isSubsetOf(pcre2)) wider.push(unit.toString(16))
  }
  t.same(wider, [], 'the rewriting only has to add equivalents, never to remove one')
})

t.test('literals and classes stand for their case-equivalents, class escapes for their own characters', async (t) => {
  const cases: Array<[string, string, string]> = [
    // pattern, characters it stands for, characters it does not
    ['k', 'kK\u212a', 'x'],
    ['\u212a', 'kK\u212a', 'x'],
    ['s', 'sS\u017f', 'ß'],
    ['ß', 'ß\u1e9e', 's'],
    ['\\x{2126}', 'ωΩ\u2126', 'o'],
    ['\u212b', 'åÅ\u212b', 'a'],
    ['θ', 'θΘϑ\u03f4', 'o'],
    ['[a-z]', 'aZ\u017f\u212a', 'ß0'],
    ['[^k]', 'x\u017f', 'kK\u212a'],
    ['[^a-z]', '0ß', 'aZ\u017f\u212a'],
    ['\\W', '\u017f\u212a', 'sk'],
    ['[\\W]', '\u017f\u212a', 'sk'],
    ['[^\\W]', 'sk', '\u017f\u212a'],
    ['\\w', 'sk', '\u017f\u212a'],
    ['[\\Wk]', '\u017f\u212ak', 's']
  ]
  for (const [pattern, members, others] of cases) {
    const has = analysedChars(pattern)
    for (const c of members) {
      t.ok(has(c), `${JSON.stringify(pattern)} with i takes U+${c.charCodeAt(0).toString(16)}`)
    }
    for (const c of others) {
      t.notOk(has(c), `${JSON.stringify(pattern)} with i does not take U+${c.charCodeAt(0).toString(16)}`)
    }
  }
})

t.test('a pattern with nothing to add is analysed as it was read', async (t) => {
  const reading = readPattern('^yoga [0-9]+$', 'i')
  if (!reading.ok) throw new Error(reading.reason)
  t.equal(analysedPattern(reading.pattern, reading.flags, reading.quote).pattern, reading.pattern)
})
