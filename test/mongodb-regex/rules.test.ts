// The service's judgement of a $regex on its own, without PCRE2 beside it (pcre2-oracle.test.ts
// holds these verdicts to PCRE2 10.42 where python3 and libpcre2 are installed).
import t from 'tap'
import { checkPattern } from '../../mongodb-regex/check-pattern.js'
import { readPattern } from '../../mongodb-regex/read-pattern.js'
import { MONGODB_REFUSES, MUST_ACCEPT, OWN_RULE, PCRE2_REFUSES } from './corpus.js'

t.test('the patterns PCRE2 refuses are refused, as INVALID_REGEX', async (t) => {
  for (const pattern of PCRE2_REFUSES) t.match(checkPattern(pattern), { ok: false, code: 'INVALID_REGEX' }, JSON.stringify(pattern))
})

t.test('a refusal by the service\'s own rule says so, and how to write the pattern', async (t) => {
  for (const [pattern, hint] of OWN_RULE) {
    t.match(readPattern(pattern), { ok: false, by: 'service', reason: hint }, `${pattern}: the service's rule, saying how to write it`)
  }
})

t.test('a NUL character, which MongoDB refuses before PCRE2 sees it', async (t) => {
  for (const pattern of MONGODB_REFUSES) t.match(readPattern(pattern), { ok: false, nul: true }, JSON.stringify(pattern))
})

t.test('the patterns clients write are accepted and safe', async (t) => {
  for (const pattern of MUST_ACCEPT) t.same(checkPattern(pattern), { ok: true }, JSON.stringify(pattern))
})

t.test('ambiguous repetition is UNSAFE_REGEX', async (t) => {
  for (const pattern of ['^(a|aa)+$', '(\\w|\\d)+$', '(.|.)*z', '(.*a){20}', '(a+)+']) {
    t.match(checkPattern(pattern), { ok: false, code: 'UNSAFE_REGEX' }, pattern)
  }
})
