// What a literal or class stands for in the safety analysis, for tests that compare it with PCRE2.
import { toCharSet, type ToCharSetElement } from 'regexp-ast-analysis'
import { analysedPattern } from '../../mongodb-regex/analysed-pattern.js'
import { readPattern } from '../../mongodb-regex/read-pattern.js'
import { lowOf } from '../../mongodb-regex/utf16.js'

/**
 * Whether the first element of a pattern, read with `options`, stands for a character in the
 * analysis (which reads one beyond U+FFFF as its low surrogate).
 */
export function analysedChars (pattern: string, options = 'i'): (character: string) => boolean {
  const reading = readPattern(pattern, options)
  if (!reading.ok) throw new Error(`${pattern}: ${reading.reason}`)
  const element = analysedPattern(reading.pattern, reading.flags, reading.quote)
    .pattern.alternatives[0]?.elements[0] as ToCharSetElement
  const chars = toCharSet(element, reading.flags)
  return (character) => {
    const code = character.codePointAt(0) as number
    return chars.has(code > 0xffff ? lowOf(code) : code)
  }
}
