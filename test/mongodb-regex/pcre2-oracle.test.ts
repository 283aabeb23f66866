// Whatever the service accepts as a $regex, MongoDB's engine compiles: each pattern of the
// corpus, under several option sets, is read by us and compiled by PCRE2 10.42 (UTF mode).
import t from 'tap'
import { readPattern } from '../../mongodb-regex/read-pattern.js'
import { pcre2OracleOrSkip } from '../helpers/pcre2-oracle.js'
import { analysedChars } from './analysed-chars.js'
import { FLAG_SETS, MUST_ACCEPT, OWN_RULE, PCRE2_REFUSES, generatedPatterns } from './corpus.js'

/**
 * Literals and classes, some with case-equivalents that JavaScript's `i` without u leaves out, some
 * without.
 */
const CASELESS_ELEMENTS = ['k', 'K', '\u212a', 's', '\u017f', 'ß', '\u1e9e', 'å', '\u212b', 'ω', '\u2126', 'θ',
  '\u03f4', 'σ', 'µ', 'é', '\u1f80',
  '[a-z]', '[k-s]', '[^k]', '[^a-z]', '[\\x{2120}-\\x{2130}]', '[^\\x{2126}]', '\\W', '[\\W]', '[^\\W]', '\\w',
  '[\\Wk]', '[^\\Ws]', '\\S', '\\d']

/** Literals and classes with characters beyond U+FFFF, and the sets that take them without naming them. */
const ASTRAL_ELEMENTS = ['😃', '\\x{10428}', '[😀-🙏]', '[^😀-🙏]', '[a-\\x{1F600}]', '[^a-\\x{1F600}]',
  '[\\x{10400}-\\x{10410}]', '[^\\x{10400}-\\x{10410}]',
  '[\\x{103FF}-\\x{10400}]', '[\\x{10000}-\\x{10FFFF}]', '[😀]', '[^😀]', '[^a]', '.', '\\W', '\\S', '\\D']

const oracle = pcre2OracleOrSkip(t, 'PCRE2 oracle')
if (oracle !== undefined) {
  // That we refuse them too is in rules.test.ts.
  t.test('the patterns PCRE2 refuses: PCRE2 does', async (t) => {
    for (const pattern of PCRE2_REFUSES) {
      const compiled = await oracle.compile(pattern)
      t.notOk(compiled.ok, `PCRE2 refuses ${JSON.stringify(pattern)}`)
    }
  })

  // That the service refuses these, and says how to write them, is in rules.test.ts.
  t.test('what the service refuses by its own rule, PCRE2 compiles', async (t) => {
    for (const [pattern] of OWN_RULE) t.ok((await oracle.compile(pattern)).ok, `${pattern}: PCRE2 compiles it`)
  })

  t.test('whenever we say PCRE2 refuses a pattern, PCRE2 does', async (t) => {
    const corpus = [...new Set([...PCRE2_REFUSES, ...MUST_ACCEPT, ...generatedPatterns(400)])]
    const blamed: string[] = []
    let own = 0
    let ownCompiled = 0
    for (const flags of FLAG_SETS) {
      for (const pattern of corpus) {
        const ours = readPattern(pattern, flags)
        if (ours.ok) continue
        const theirs = await oracle.compile(pattern, flags)
        if (ours.by === 'pcre2' && theirs.ok) {
          blamed.push(`/${pattern}/${flags}: we say "${ours.reason}", PCRE2 compiles it`)
        }
        if (ours.by === 'service') {
          own++
          if (theirs.ok) ownCompiled++
        }
      }
    }
    t.same(blamed, [], 'no refusal is blamed on PCRE2 wrongly')
    // A generated pattern often holds several faults; the first one found is named, so a pattern the
    // service refuses by its own rule may hold something PCRE2 refuses too.
    t.comment(`refusals by the service's own rule: ${own}, of which PCRE2 compiles ${ownCompiled}`)
    t.ok(own > 0 && ownCompiled > 0, 'the corpus exercises the service\'s own rules')
  })

  t.test('with i, each literal and class stands in the analysis for the characters PCRE2 matches', async (t) => {
    // Every character whose equivalents differ between PCRE2 and JavaScript's i without u, and ASCII.
    const subjects = [...'\u212a\u017f\u212b\u2126\u1e9e\u03f4\u03d1\u1f80\u1f88\u1fb3\u1fbc' +
      '\u00b5\u039c\u03bc\u03c2\u03a3\u00e9\u00c9ßåÅωΩθΘσ']
    for (let code = 0x20; code < 0x7f; code++) subjects.push(String.fromCharCode(code))
    const disagreements: string[] = []
    for (const element of CASELESS_ELEMENTS) {
      const ours = analysedChars(element)
      for (const subject of subjects) {
        const theirs = await oracle.match(`^${element}$`, 'i', subject)
        if (theirs !== ours(subject)) {
          disagreements.push(`${element} and U+${subject.charCodeAt(0).toString(16)}: ` +
            `PCRE2 ${theirs === true ? 'matches' : 'does not match'}`)
        }
      }
    }
    t.same(disagreements, [], `${CASELESS_ELEMENTS.length} elements × ${subjects.length} characters`)
  })

  t.test('beyond U+FFFF, each literal and class stands in the analysis for at least the characters ' +
    'PCRE2 matches', async (t) => {
    // The analysis reads such a character as its low surrogate: two may share one, never may one be left out.
    const subjects = [...'😀😃🙏🚀\u{1f5ff}\u{1f650}\u{10400}\u{10410}\u{10411}\u{10428}\u{10438}\u{10439}' +
      '\u{103ff}\u{10000}\u{10ffff}\uffffaAk']
    const missed: string[] = []
    for (const flags of ['', 'i']) {
      for (const element of ASTRAL_ELEMENTS) {
        const ours = analysedChars(element, flags)
        for (const subject of subjects) {
          if (await oracle.match(`^${element}$`, flags, subject) === true && !ours(subject)) {
            missed.push(`${element}/${flags} and U+${(subject.codePointAt(0) as number).toString(16)}`)
          }
        }
      }
    }
    t.same(missed, [], `${ASTRAL_ELEMENTS.length} elements × ${subjects.length} characters × 2 option sets`)
  })

  t.test('the patterns clients write (accepted and safe: rules.test.ts) compile in PCRE2', async (t) => {
    for (const pattern of MUST_ACCEPT) {
      t.ok((await oracle.compile(pattern)).ok, `PCRE2 compiles ${JSON.stringify(pattern)}`)
    }
  })

  t.test('over the whole corpus and every option set, whatever we accept PCRE2 compiles', async (t) => {
    const corpus = [...new Set([...PCRE2_REFUSES, ...MUST_ACCEPT, ...generatedPatterns(400)])]
    t.ok(corpus.length >= 300, `${corpus.length} patterns`)
    let accepted = 0
    let refusedByBoth = 0
    const disagreements: string[] = []
    for (const flags of FLAG_SETS) {
      for (const pattern of corpus) {
        const ours = readPattern(pattern, flags)
        const theirs = await oracle.compile(pattern, flags)
        if (ours.ok) accepted++
        else if (!theirs.ok) refusedByBoth++
        if (ours.ok && !theirs.ok) disagreements.push(`/${pattern}/${flags}: PCRE2 says ${theirs.error ?? ''}`)
      }
    }
    t.same(disagreements, [], 'no pattern we accept is refused by PCRE2')
    t.comment(`${corpus.length} patterns × ${FLAG_SETS.length} option sets: ${accepted} accepted, ` +
      `${refusedByBoth} refused by both`)
    t.ok(accepted > 500 && refusedByBoth > 500, 'the corpus exercises both sides')
  })
}
