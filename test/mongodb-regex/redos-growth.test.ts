// ReDoS judged by growth, not by a clock: for each pattern we accept, PCRE2's own backtracking
// count (the smallest match limit that lets the match finish) is measured on attack strings
// (a pump repeated 16, 32, 64 times, then a failing suffix). It must grow at most like a cubic,
// never exponentially. The unsafe patterns of the contract show why the measure can fail.
import t from 'tap'
import { SeededRandom } from '../../demo-data/random.js'
import { checkPattern } from '../../mongodb-regex/check-pattern.js'
import { pcre2OracleOrSkip, type Pcre2Oracle } from '../helpers/pcre2-oracle.js'
import {
  ASTRAL_CLASSES,
  MUST_ACCEPT,
  SAFE_CASELESS,
  UNSAFE_ASTRAL,
  UNSAFE_AS_PCRE2_READS,
  UNSAFE_ONLY_CASELESS
} from './corpus.js'

const CAP = 2_000_000
const SIZES = [16, 32, 64]
/** Doubling the pump multiplies a cubic by 8; an exponential by far more. */
const MAX_RATIO = 8
const SLACK = 200

/** Atoms that overlap on purpose, so that many generated patterns are ambiguous. */
const ATOMS = ['a', 'b', 'a?', 'ab', '\\w', '\\d', '\\s', '.', '[ab]', '(a|b)', '(a|ab)', '(?:a|a)', '(a+)',
  '(\\w+\\s?)', '(?:.a)', 'x', '\\b']
const QUANTIFIERS = ['', '*', '+', '?', '{2,}', '{1,5}', '{20}', '*?']

function riskyPatterns (count: number): string[] {
  const random = new SeededRandom(21)
  return Array.from({ length: count }, () => {
    const items = Array.from({ length: random.int(1, 4) }, () => random.pick(ATOMS) + random.pick(QUANTIFIERS))
    const body = random.chance(0.3) ? `(?:${items.join('')})${random.pick(['+', '*', '{2,}'])}` : items.join('')
    return (random.chance(0.4) ? '^' : '') + body + (random.chance(0.5) ? '$' : '')
  })
}

function pumpsFor (pattern: string): string[] {
  const letters = [...new Set(pattern.replace(/\\[a-z]/gi, '').match(/[a-z]/g) ?? [])]
  return [...letters.slice(0, 2), '0', ' ', 'ab'].slice(0, 4)
}

/** JSON with non-ASCII escaped, so that a test's name shows which character it is about. */
const show = (text: string): string =>
  JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

/** Pumps for caseless patterns: each letter written, and the two that PCRE2 alone folds with ASCII ones. */
function caselessPumpsFor (pattern: string): string[] {
  return [...new Set([...pattern.replace(/\\[a-z]/gi, '').matchAll(/\p{L}/gu)]
    .map(([letter]) => letter).concat(['\u017f', '\u212a']))]
}

/** Attacks on a caseless pattern: a digit fails where `\W` would take the usual '!'. */
const caselessGrowth = async (oracle: Pcre2Oracle, pattern: string, flags: string): ReturnType<typeof worstGrowth> =>
  await worstGrowth(oracle, pattern, flags, caselessPumpsFor(pattern), ['!', '0'])

/** The worst growth of PCRE2's backtracking over the attack strings for a pattern: counts per size. */
async function worstGrowth (
  oracle: Pcre2Oracle, pattern: string, flags = '', pumps = pumpsFor(pattern), suffixes = ['!', '\n!']
): Promise<{ counts: Array<number | null>, attack: string }> {
  let worst = { counts: [] as Array<number | null>, attack: '', ratio: 0 }
  for (const pump of pumps) {
    for (const suffix of suffixes) {
      const counts: Array<number | null> = []
      for (const size of SIZES) {
        counts.push(await oracle.steps(pattern, flags, pump.repeat(size) + suffix, CAP))
        // Over the cap already: a longer pump cannot make the growth any worse than explosive.
        if (counts.at(-1) === null) break
      }
      const ratio = counts.includes(null)
        ? Infinity
        : Math.max(...counts.slice(1).map((c, i) => (c as number) / ((counts[i] as number) + SLACK)))
      if (ratio > worst.ratio) {
        worst = { counts, attack: `${JSON.stringify(pump)}×n + ${JSON.stringify(suffix)}`, ratio }
      }
      // No attack can be worse than one over the cap.
      if (ratio === Infinity) return worst
    }
  }
  return worst
}

const explodes = ({ counts }: { counts: Array<number | null> }): boolean =>
  counts.includes(null) || counts.slice(1).some((c, i) => (c as number) > MAX_RATIO * ((counts[i] as number) + SLACK))

const oracle = pcre2OracleOrSkip(t, 'ReDoS growth')
if (oracle !== undefined) {
  t.test('the measure can fail: refused patterns backtrack explosively in PCRE2 itself', async (t) => {
    for (const pattern of ['^(a|aa)+$', '^(\\w|\\d)+$', '^(a+)+$', '^(.*a){20}$', '^(\\w+\\s?)*$', '^(a?){25}a{25}$',
      `^${'a?'.repeat(25)}${'a'.repeat(25)}$`]) {
      t.equal(checkPattern(pattern).ok, false, `we refuse ${pattern}`)
      t.ok(explodes(await worstGrowth(oracle, pattern)), `PCRE2's backtracking explodes on ${pattern}`)
    }
  })

  t.test('for every accepted pattern, backtracking grows at most polynomially (degree ≤ 3)', async (t) => {
    const candidates = [...new Set([...MUST_ACCEPT, ...riskyPatterns(600)])]
    let accepted = 0
    const failures: string[] = []
    for (const pattern of candidates) {
      if (!checkPattern(pattern).ok) continue
      accepted++
      const growth = await worstGrowth(oracle, pattern)
      if (explodes(growth)) failures.push(`${pattern} on ${growth.attack}: ${growth.counts.join(' → ')}`)
    }
    t.comment(`${candidates.length} candidates, ${accepted} accepted and measured`)
    t.ok(accepted >= 150, 'enough accepted patterns to mean something')
    t.same(failures, [], 'no accepted pattern backtracks explosively')
  })

  t.test('beyond U+FFFF, what PCRE2 takes as one character alike explodes in PCRE2 and is refused', async (t) => {
    // The second suffix fails where a negated class would take the '!'.
    const suffixes = ['!', '😀']
    for (const [pattern, pump] of UNSAFE_ASTRAL) {
      t.equal(checkPattern(pattern).ok, false, `we refuse ${show(pattern)}`)
      t.ok(explodes(await worstGrowth(oracle, pattern, '', [pump], suffixes)),
        `PCRE2's backtracking explodes on ${show(pattern)}`)
    }
    for (const pattern of ASTRAL_CLASSES) {
      t.equal(checkPattern(pattern).ok, true, `we accept ${show(pattern)}`)
      t.notOk(explodes(await worstGrowth(oracle, pattern, '', ['😃', '🚀', 'x', '😃x'], suffixes)),
        `PCRE2's backtracking does not explode on ${show(pattern)}`)
    }
  })

  t.test('what PCRE2 reads more widely than JavaScript (`.`, `\\v`) explodes in PCRE2 and is refused', async (t) => {
    for (const [pattern, pump, suffix] of UNSAFE_AS_PCRE2_READS) {
      t.equal(checkPattern(pattern).ok, false, `we refuse ${show(pattern)}`)
      t.ok(explodes(await worstGrowth(oracle, pattern, '', [pump], [suffix])),
        `PCRE2's backtracking explodes on ${show(pattern)}`)
    }
  })

  t.test('with i, what PCRE2 alone folds together explodes in PCRE2 and is refused; ' +
    'what it keeps apart is accepted', async (t) => {
    for (const pattern of UNSAFE_ONLY_CASELESS) {
      const name = show(pattern)
      t.equal(checkPattern(pattern, 'i').ok, false, `we refuse ${name} with i`)
      t.ok(explodes(await caselessGrowth(oracle, pattern, 'i')), `PCRE2's backtracking explodes on ${name} with i`)
      t.equal(checkPattern(pattern).ok, true, `we accept ${name} without i`)
      t.notOk(explodes(await caselessGrowth(oracle, pattern, '')), 'and PCRE2\'s does not explode on it without i')
    }
    for (const pattern of SAFE_CASELESS) {
      t.equal(checkPattern(pattern, 'i').ok, true, `we accept ${show(pattern)} with i`)
      t.notOk(explodes(await caselessGrowth(oracle, pattern, 'i')),
        `PCRE2's backtracking does not explode on ${show(pattern)} with i`)
    }
  })
}
