// What a literal or class stands for in the safety analysis, for tests that compare it with PCRE2.
import { toCharSet, type ToCharSetElement } from 'regexp-ast-analysis'
import { spellOutCaseless } from '../../mongodb-regex/caseless.js'
import { readPattern } from '../../mongodb-regex/read-pattern.js'

/** Whether the first element of a pattern, read with `i`, stands for a character (one outside the astral planes). */
export function analysedChars (pattern: string): (character: string) => boolean {
  const reading = readPattern(pattern, 'i')
  if (!reading.ok) throw new Error(`${pattern}: ${reading.reason}`)
  const element = spellOutCaseless(reading.pattern).pattern.alternatives[0]?.elements[0] as ToCharSetElement
  const chars = toCharSet(element, reading.flags)
  return (character) => chars.has(character.charCodeAt(0))
}
