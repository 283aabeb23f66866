// The pattern the safety analysis reads, each literal and class standing for what PCRE2 (UTF mode)
// matches there. Read without the u flag, a character beyond U+FFFF is two code units (utf16.ts),
// while `.`, `\W` or `[^a]` take it in one: compared unit by unit, `(.x|😀x)+` would look safe and
// `😀+` would repeat half a character. Here each such character is one unit, its low surrogate
// (which still tells 😀 from 😃), and a negated class keeps every surrogate. With `i`, a literal or
// class also lists the case-equivalents PCRE2 adds and JavaScript's `i` without u leaves out (the
// Kelvin sign and k, ſ and s, ẞ and ß, astral letters), so that `(\x{212A}|k)+$` is found.
// `.`, `\v` and `\s` stand for what PCRE2 reads there (`.` stops at \n alone, `\v` is every vertical
// space, `\s` ASCII white space only), so that `(.|\r)+$`, `(\v|\n)+$` and `(\S|\x{a0})+$` are found.
import { RegExpParser, visitRegExpAST, type AST } from '@eslint-community/regexpp'
import { CharSet, JS, type CharRange } from 'refa'
import type { ReadonlyFlags } from 'regexp-ast-analysis'
import { originalPosition, type PlacedEdit, type Quote } from './text-edits.js'
import { SPACE, VERTICAL_SPACE } from './pcre2-sets.js'
import { classMembers, highOf, isHigh, isLow, lowOf, pairValue, unitRanges } from './utf16.js'

// PCRE2's caseless sets: Unicode simple case folding (pcre2pattern "Characters and metacharacters";
// maint/GenerateUcd.py).
/** A character's equivalents in PCRE2: JavaScript's with the u flag, which fold by the same table. */
const caseEquivalents = (chars: Iterable<CharRange>): CharSet =>
  JS.createCharSet(chars, { unicode: true, ignoreCase: true })
/** Without u, JavaScript's equivalents are a subset of PCRE2's (caseless.test.ts checks it for every code unit). */
const javaScriptEquivalents = (units: Iterable<CharRange>): CharSet =>
  JS.createCharSet(units, { unicode: false, ignoreCase: true })

/** Characters as the analysis sees them: those up to U+FFFF as themselves, the others by their low surrogate. */
function analysedUnits (set: CharSet, negate: boolean): CharSet {
  const units: CharRange[] = []
  for (const { min, max } of set.ranges) {
    if (min <= 0xffff) units.push({ min, max: Math.min(max, 0xffff) })
    if (max <= 0xffff || negate) continue
    const from = Math.max(min, 0x10000)
    units.push(highOf(from) === highOf(max) ? { min: lowOf(from), max: lowOf(max) } : { min: 0xdc00, max: 0xdfff })
  }
  // A negated class leaves out only what it names below U+FFFF: the rest of its complement takes every surrogate.
  return CharSet.empty(0xffff).union(units)
}

const spell = (set: CharSet): string => unitRanges(set.ranges)

/** The astral character a surrogate outside a class belongs to, paired as to-javascript.ts pairs it. */
function astral (node: AST.Character): number | undefined {
  const holder = node.parent.type === 'Quantifier' ? node.parent : node
  if (holder.parent.type !== 'Alternative') return undefined
  const siblings = holder.parent.elements
  const at = siblings.indexOf(holder as AST.Element)
  if (isHigh(node) && holder === node) {
    const next = siblings[at + 1]
    const low = next?.type === 'Quantifier' ? next.element : next
    return isLow(low) ? pairValue(node.value, low.value) : undefined
  }
  const previous = siblings[at - 1]
  return isLow(node) && isHigh(previous) ? pairValue(previous.value, node.value) : undefined
}

/**
 * What each character up to U+FFFF becomes outside a class with `i` ('' for itself): at most one entry per code
 * unit.
 */
const bmpLiterals = new Map<number, string>()

/** A literal outside a class as the analysis reads it, or undefined when it reads it as it is. */
function literal (node: AST.Character, ignoreCase: boolean): string | undefined {
  const code = astral(node)
  // The high surrogate goes: its low one stands for the character.
  if (code !== undefined && isHigh(node)) return ''
  if (!ignoreCase) return undefined
  let text = code === undefined ? bmpLiterals.get(node.value) : undefined
  if (text === undefined) {
    const units = analysedUnits(caseEquivalents([{ min: code ?? node.value, max: code ?? node.value }]), false)
    text = units.isSubsetOf(javaScriptEquivalents([{ min: node.value, max: node.value }])) ? '' : `[${spell(units)}]`
    if (code === undefined) bmpLiterals.set(node.value, text)
  }
  return text === '' ? undefined : text
}

const isVerticalSpace = (node: AST.Node): boolean => node.type === 'Character' && node.raw === '\\v'
const NOT_SPACE = CharSet.empty(0x10ffff).union(SPACE).negate().ranges
const isSpace = (node: AST.Node): node is AST.EscapeCharacterSet & { kind: 'space' } =>
  node.type === 'CharacterSet' && node.kind === 'space'

/**
 * A class as the analysis reads it (`\w`, `\d`, `\s` keep their own characters, as in PCRE2), or undefined when it
 * reads it as it is.
 */
function characterClass (node: AST.CharacterClass, ignoreCase: boolean): string | undefined {
  const { astral, rest } = classMembers(node.elements)
  // Members JavaScript reads otherwise than PCRE2 does: the class is always written out.
  const differ = astral.length > 0 || rest.some((element) => isVerticalSpace(element) || isSpace(element))
  if (!differ && !ignoreCase) return undefined
  // What PCRE2 reads in the class, and what JavaScript does.
  const codePoints: CharRange[] = [...astral]
  const written: CharRange[] = []
  const escapes: string[] = []
  for (const element of rest) {
    if (element.type === 'Character') {
      written.push({ min: element.value, max: element.value })
      codePoints.push(...(isVerticalSpace(element) ? VERTICAL_SPACE : [{ min: element.value, max: element.value }]))
    } else if (element.type === 'CharacterClassRange') {
      written.push({ min: element.min.value, max: element.max.value })
      codePoints.push({ min: element.min.value, max: element.max.value })
    } else if (isSpace(element)) codePoints.push(...(element.negate ? NOT_SPACE : SPACE))
    else escapes.push(element.raw)
  }
  const chars = ignoreCase ? caseEquivalents(codePoints) : CharSet.empty(0x10ffff).union(codePoints)
  const units = analysedUnits(chars, node.negate)
  if (!differ && units.isSubsetOf(javaScriptEquivalents(written))) return undefined
  return `[${node.negate ? '^' : ''}${escapes.join('')}${spell(units)}]`
}

const parser = new RegExpParser({ ecmaVersion: 2024 })

/** Units of a pattern's text that may stand for characters beyond U+FFFF, raw or as read-pattern.ts writes them. */
const SURROGATES = /[\ud800-\udfff]|\\ud[89a-f]/i

/**
 * The pattern as the safety analysis reads it, and the text of each of its nodes as the client
 * wrote it (`quote` gives it for the pattern read). The pattern read is returned when nothing changes.
 */
export function analysedPattern (
  read: AST.Pattern, { ignoreCase, dotAll }: ReadonlyFlags, quote: Quote
): { pattern: AST.Pattern, written: (node: AST.Node) => string } {
  const untouched = { pattern: read, written: (node: AST.Node) => quote(node.start, node.end) }
  if (ignoreCase !== true && !SURROGATES.test(read.raw) && (dotAll === true || !read.raw.includes('.')) &&
    !/\\[vsS]/.test(read.raw)) return untouched
  const edits: Array<{ start: number, end: number, text: string }> = []
  visitRegExpAST(read, {
    onCharacterEnter (node) {
      if (node.parent.type === 'CharacterClass' || node.parent.type === 'CharacterClassRange') return
      const text = isVerticalSpace(node) ? `[${unitRanges(VERTICAL_SPACE)}]` : literal(node, ignoreCase === true)
      if (text !== undefined) edits.push({ start: node.start, end: node.end, text })
    },
    // PCRE2's `.` stops at \n alone (its newline convention), JavaScript's also at \r, U+2028 and U+2029.
    onCharacterSetEnter (node) {
      if (node.kind === 'any' && dotAll !== true) edits.push({ start: node.start, end: node.end, text: '[^\\n]' })
      if (node.kind === 'space' && node.parent.type !== 'CharacterClass') {
        edits.push({ start: node.start, end: node.end, text: `[${node.negate ? '^' : ''}${unitRanges(SPACE)}]` })
      }
    },
    onCharacterClassEnter (node) {
      if (node.unicodeSets) return
      const text = characterClass(node, ignoreCase === true)
      if (text !== undefined) edits.push({ start: node.start, end: node.end, text })
    }
  })
  if (edits.length === 0) return untouched
  edits.sort((a, b) => a.start - b.start)
  const source = read.raw
  let rewritten = ''
  let from = 0
  const placed: PlacedEdit[] = []
  for (const edit of edits) {
    rewritten += source.slice(from, edit.start)
    placed.push({ start: edit.start, end: edit.end, at: rewritten.length, to: rewritten.length + edit.text.length })
    rewritten += edit.text
    from = edit.end
  }
  rewritten += source.slice(from)
  return {
    pattern: parser.parsePattern(rewritten, 0, rewritten.length, { unicode: false, unicodeSets: false }),
    written: (node) => quote(originalPosition(placed, node.start), originalPosition(placed, node.end))
  }
}
