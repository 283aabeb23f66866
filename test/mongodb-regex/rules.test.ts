// The service's judgement of a $regex on its own, without PCRE2 beside it (pcre2-oracle.test.ts
// holds these verdicts to PCRE2 10.42 where python3 and libpcre2 are installed).
import t from 'tap'
import { checkPattern } from '../../mongodb-regex/check-pattern.js'
import { readPattern } from '../../mongodb-regex/read-pattern.js'
import {
  ASTRAL_CLASSES,
  ASTRAL_REFUSED,
  FLAG_SETS,
  MONGODB_REFUSES,
  MUST_ACCEPT,
  OWN_RULE,
  PCRE2_REFUSES,
  SAFE_CASELESS,
  UNSAFE_ASTRAL,
  UNSAFE_AS_PCRE2_READS,
  UNSAFE_ONLY_CASELESS
} from './corpus.js'

/** JSON with non-ASCII escaped, so that a test's name shows which character it is about. */
const show = (text: string): string =>
  JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

t.test('the patterns PCRE2 refuses are refused, as INVALID_REGEX', async (t) => {
  for (const pattern of PCRE2_REFUSES) {
    t.match(checkPattern(pattern), { ok: false, code: 'INVALID_REGEX' }, JSON.stringify(pattern))
  }
})

t.test('a refusal by the service\'s own rule says so, and how to write the pattern', async (t) => {
  for (const [pattern, hint] of OWN_RULE) {
    t.match(readPattern(pattern), { ok: false, by: 'service', reason: hint },
      `${pattern}: the service's rule, saying how to write it`)
  }
})

t.test('a NUL character, which MongoDB refuses before PCRE2 sees it', async (t) => {
  for (const pattern of MONGODB_REFUSES) {
    t.match(readPattern(pattern), { ok: false, nul: true }, JSON.stringify(pattern))
  }
})

t.test('the patterns clients write are accepted and safe', async (t) => {
  for (const pattern of MUST_ACCEPT) t.same(checkPattern(pattern), { ok: true }, JSON.stringify(pattern))
})

t.test('classes with ranges beyond U+FFFF are read as PCRE2 reads them, with every option set', async (t) => {
  for (const options of FLAG_SETS) {
    for (const pattern of ASTRAL_CLASSES) {
      t.same(checkPattern(pattern, options), { ok: true }, `${show(pattern)} with "${options}"`)
    }
  }
  for (const pattern of ASTRAL_REFUSED) {
    t.match(checkPattern(pattern), { ok: false, code: 'INVALID_REGEX', by: 'pcre2' }, show(pattern))
  }
  t.match(checkPattern('[🙏-😀]'), { reason: 'range out of order in character class' })
  t.match(checkPattern('[\\x{1F600}-\\d]'), { reason: /^'\[\\x\{1F600\}-\\d\]' has a range next to a class escape/ })
  // No UTF-8 text holds a lone surrogate, and the surrogates a class is read into (utf16.ts) must be the service's own.
  t.match(readPattern('[\ud83d-\ude4f]'), { ok: false, by: 'pcre2', reason: /lone surrogate/ })
})

t.test('a character beyond U+FFFF is one character to the safety analysis, as to PCRE2', async (t) => {
  for (const [pattern] of UNSAFE_ASTRAL) {
    t.match(checkPattern(pattern), { ok: false, code: 'UNSAFE_REGEX' }, show(pattern))
  }
  for (const [pattern] of UNSAFE_AS_PCRE2_READS) {
    t.match(checkPattern(pattern), { ok: false, code: 'UNSAFE_REGEX' }, show(pattern))
  }
})

t.test('ambiguous repetition is UNSAFE_REGEX', async (t) => {
  for (const pattern of ['^(a|aa)+$', '(\\w|\\d)+$', '(.|.)*z', '(.*a){20}', '(a+)+']) {
    t.match(checkPattern(pattern), { ok: false, code: 'UNSAFE_REGEX' }, pattern)
  }
})

t.test('with $options i, characters are compared as PCRE2 compares them caselessly in UTF mode', async (t) => {
  for (const pattern of UNSAFE_ONLY_CASELESS) {
    t.match(checkPattern(pattern, 'i'), { ok: false, code: 'UNSAFE_REGEX' }, `${show(pattern)} with i`)
    t.same(checkPattern(pattern), { ok: true }, `${show(pattern)} without i`)
  }
  for (const pattern of SAFE_CASELESS) t.same(checkPattern(pattern, 'i'), { ok: true }, `${show(pattern)} with i`)
  for (const pattern of MUST_ACCEPT) t.same(checkPattern(pattern, 'i'), { ok: true }, `${show(pattern)} with i`)
})

t.test('an UNSAFE_REGEX reason quotes the repetition as the client wrote it, with i too', async (t) => {
  t.match(checkPattern('(\u212a|k)+$', 'i'), { reason: /^'\(\u212a\|k\)\+' repeats alternatives/ })
  t.match(checkPattern('^x(?:\u017f|[a-z]){2,}$', 'i'), { reason: /^'\(\?:\u017f\|\[a-z\]\)\{2,\}'/ })
  t.match(checkPattern('([\\x{1F600}-\\x{1F64F}]|😃)+$'), {
    reason: /^'\(\[\\x\{1F600\}-\\x\{1F64F\}\]\|😃\)\+' repeats alternatives/
  })
  t.match(checkPattern('(?:😀+)+$', 'i'), { reason: /^'\(\?:😀\+\)\+' nests repetitions/ })
})
