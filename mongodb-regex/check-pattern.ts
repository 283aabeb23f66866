import { LRUCache } from 'lru-cache'
import { findAmbiguity } from './ambiguity.js'
import { readPattern } from './read-pattern.js'

export type PatternVerdict =
  | { ok: true }
  | { ok: false, code: 'INVALID_REGEX' | 'UNSAFE_REGEX', reason: string }

/** Clients repeat their patterns: the analysis (tens to hundreds of µs) runs once per pattern and options. */
const verdicts = new LRUCache<string, PatternVerdict>({ max: 2000 })

/**
 * Judges a `$regex` pattern by the engine that runs it: PCRE2 must compile it as MongoDB does
 * (INVALID_REGEX otherwise), and it must have no ambiguous repetition (UNSAFE_REGEX).
 */
export function checkPattern (pattern: string, options = ''): PatternVerdict {
  const key = `${options}/${pattern}`
  let verdict = verdicts.get(key)
  if (verdict === undefined) {
    verdict = judge(pattern, options)
    verdicts.set(key, verdict)
  }
  return verdict
}

function judge (pattern: string, options: string): PatternVerdict {
  const reading = readPattern(pattern, options)
  if (!reading.ok) return { ok: false, code: 'INVALID_REGEX', reason: reading.reason }
  const ambiguity = findAmbiguity(reading.pattern, reading.flags)
  return ambiguity === undefined ? { ok: true } : { ok: false, code: 'UNSAFE_REGEX', reason: ambiguity }
}
