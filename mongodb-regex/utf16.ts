// Characters beyond U+FFFF in a pattern read without the u flag (read-pattern.ts), where JavaScript
// sees code units. A literal is its two surrogates. A class member or range is written as UTF-16
// lays such characters out: runs of high surrogates, each followed by the low surrogates it pairs
// with, so that no range is out of order for JavaScript. to-javascript.ts and the safety analysis
// read these runs back as the characters PCRE2's UTF mode sees.
import type { AST } from '@eslint-community/regexpp'
import type { CharRange } from 'refa'

export const isHigh = (n: AST.Node | undefined): n is AST.Character =>
  n?.type === 'Character' && n.value >= 0xd800 && n.value <= 0xdbff
export const isLow = (n: AST.Node | undefined): n is AST.Character =>
  n?.type === 'Character' && n.value >= 0xdc00 && n.value <= 0xdfff
export const pairValue = (high: number, low: number): number => (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000
export const highOf = (c: number): number => 0xd800 + ((c - 0x10000) >> 10)
export const lowOf = (c: number): number => 0xdc00 + ((c - 0x10000) & 0x3ff)

/** A code unit as the escape a pattern read without the u flag takes. */
export const unit = (c: number): string => `\\u${c.toString(16).padStart(4, '0')}`
const units = (min: number, max: number): string => min === max ? unit(min) : `${unit(min)}-${unit(max)}`
/** Ranges of code units as the members of a class. */
export const unitRanges = (ranges: readonly CharRange[]): string =>
  ranges.map(({ min, max }) => units(min, max)).join('')

/**
 * The class text for the characters `min`–`max`, `max` beyond U+FFFF: the part below without surrogates, then
 * UTF-16's runs.
 */
export function classRange (min: number, max: number): string {
  let text = ''
  if (min < 0xd800) text += `${units(min, 0xd7ff)}${units(0xe000, 0xffff)}`
  else if (min <= 0xffff) text += units(min, 0xffff)
  const from = Math.max(min, 0x10000)
  const [firstHigh, lastHigh] = [highOf(from), highOf(max)]
  if (firstHigh === lastHigh) return text + unit(firstHigh) + units(lowOf(from), lowOf(max))
  text += unit(firstHigh) + units(lowOf(from), 0xdfff)
  if (lastHigh - firstHigh > 1) text += units(firstHigh + 1, lastHigh - 1) + units(0xdc00, 0xdfff)
  return text + unit(lastHigh) + units(0xdc00, lowOf(max))
}

/** The units a class element spans when they all lie in [min, max]. */
function spanWithin (element: AST.CharacterClassElement | undefined, min: number, max: number): CharRange | undefined {
  const span = element?.type === 'Character'
    ? { min: element.value, max: element.value }
    : element?.type === 'CharacterClassRange' ? { min: element.min.value, max: element.max.value } : undefined
  return span !== undefined && span.min >= min && span.max <= max ? span : undefined
}

/**
 * A class's members with each run of high surrogates and the low ones after it read as the
 * characters they pair into (`astral`); every other element as it is (`rest`).
 */
export function classMembers (
  elements: readonly AST.CharacterClassElement[]
): { astral: CharRange[], rest: AST.CharacterClassElement[] } {
  const astral: CharRange[] = []
  const rest: AST.CharacterClassElement[] = []
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i] as AST.CharacterClassElement
    const highs = spanWithin(element, 0xd800, 0xdbff)
    const lows = spanWithin(elements[i + 1], 0xdc00, 0xdfff)
    if (highs === undefined || lows === undefined) {
      rest.push(element)
      continue
    }
    // classRange puts a run of several high surrogates only before every low one; another run is read high by high.
    const whole = highs.min === highs.max || (lows.min === 0xdc00 && lows.max === 0xdfff)
    for (let high = highs.min; high <= highs.max; high = whole ? highs.max + 1 : high + 1) {
      astral.push({ min: pairValue(high, lows.min), max: pairValue(whole ? highs.max : high, lows.max) })
    }
    i++
  }
  return { astral, rest }
}
