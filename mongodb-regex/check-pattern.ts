import { findAmbiguity } from './ambiguity.js'
import { readPattern, type RefusedBy } from './read-pattern.js'
import { RecentMap } from '../lib/recent-map.js'

export type PatternVerdict =
  | { ok: true }
  /** `by`: PCRE2 itself refuses the pattern, or the service does by its own rule (syntax, safety). */
  | { ok: false, code: 'INVALID_REGEX' | 'UNSAFE_REGEX', reason: string, by: RefusedBy, nul?: boolean }

/**
 * Clients repeat their patterns: the analysis (docs/performance.md, "Compile") runs once per pattern and options.
 * One cache per option string (at most the 65 orderings of `imsx`), keyed by the pattern alone,
 * so that no key is built on the hot path.
 */
const verdictsByOptions = new Map<string, RecentMap<PatternVerdict>>()
const CACHED_PATTERNS = 1000

/**
 * Judges a `$regex` pattern by the engine that runs it: PCRE2 must compile it as MongoDB does
 * (INVALID_REGEX otherwise), and it must have no ambiguous repetition (UNSAFE_REGEX).
 */
export function checkPattern (pattern: string, options = ''): PatternVerdict {
  let verdicts = verdictsByOptions.get(options)
  if (verdicts === undefined) {
    verdicts = new RecentMap<PatternVerdict>(CACHED_PATTERNS)
    verdictsByOptions.set(options, verdicts)
  }
  let verdict = verdicts.get(pattern)
  if (verdict === undefined) {
    verdict = checkPatternUncached(pattern, options)
    verdicts.set(pattern, verdict)
  }
  return verdict
}

/** The verdict without the cache (benchmarks measure a first use with it). */
export function checkPatternUncached (pattern: string, options: string): PatternVerdict {
  const reading = readPattern(pattern, options)
  if (!reading.ok) {
    return {
      ok: false,
      code: 'INVALID_REGEX',
      reason: reading.reason,
      by: reading.by,
      ...(reading.nul === true ? { nul: true } : {})
    }
  }
  const ambiguity = findAmbiguity(reading.pattern, reading.flags, reading.quote)
  return ambiguity === undefined ? { ok: true } : { ok: false, code: 'UNSAFE_REGEX', reason: ambiguity, by: 'service' }
}
