// The `i` option as PCRE2 reads it in UTF mode. JavaScript's `i` without the u flag (how patterns
// are parsed here) leaves out some of PCRE2's equivalents (the Kelvin sign and k, ſ and s, ẞ and
// ß, astral letters), so the analysis would miss `(\x{212A}|k)+$`. A literal or class that has
// such equivalents is rewritten to list them, and the rewritten pattern is analysed with `i`.
import { RegExpParser, visitRegExpAST, type AST } from '@eslint-community/regexpp'
import { CharSet, JS, type CharRange } from 'refa'

// PCRE2's caseless sets: Unicode simple case folding (pcre2pattern "Characters and metacharacters"; maint/GenerateUcd.py).
/** A character's equivalents in PCRE2: JavaScript's with the u flag, which fold by the same table. */
const caseEquivalents = (chars: Iterable<CharRange>): CharSet => JS.createCharSet(chars, { unicode: true, ignoreCase: true })
/** Without u, JavaScript's equivalents are a subset of PCRE2's (caseless.test.ts checks it for every code unit). */
const javaScriptEquivalents = (units: Iterable<CharRange>): CharSet => JS.createCharSet(units, { unicode: false, ignoreCase: true })

const isHigh = (n: AST.Node | undefined): n is AST.Character => n?.type === 'Character' && n.value >= 0xd800 && n.value <= 0xdbff
const isLow = (n: AST.Node | undefined): n is AST.Character => n?.type === 'Character' && n.value >= 0xdc00 && n.value <= 0xdfff
const pairValue = (high: number, low: number): number => (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000
const highOf = (c: number): number => 0xd800 + ((c - 0x10000) >> 10)
const lowOf = (c: number): number => 0xdc00 + ((c - 0x10000) & 0x3ff)

/**
 * A set of code points as the code units a pattern read without the u flag can hold. An astral
 * range becomes a range of its high and of its low surrogates, which is wider, never narrower.
 */
function codeUnits (set: CharSet): { bmp: CharSet, high: CharSet, low: CharSet } {
  const bmp: CharRange[] = []
  const high: CharRange[] = []
  const low: CharRange[] = []
  for (const { min, max } of set.ranges) {
    if (min <= 0xffff) bmp.push({ min, max: Math.min(max, 0xffff) })
    if (max <= 0xffff) continue
    const from = Math.max(min, 0x10000)
    high.push({ min: highOf(from), max: highOf(max) })
    low.push(highOf(from) === highOf(max) ? { min: lowOf(from), max: lowOf(max) } : { min: 0xdc00, max: 0xdfff })
  }
  const units = (ranges: CharRange[]): CharSet => CharSet.empty(0xffff).union(ranges)
  return { bmp: units(bmp), high: units(high), low: units(low) }
}

const unit = (c: number): string => `\\u${c.toString(16).padStart(4, '0')}`
const spell = (set: CharSet): string => set.ranges.map(({ min, max }) => min === max ? unit(min) : `${unit(min)}-${unit(max)}`).join('')

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

/** What each character outside the astral planes becomes outside a class ('' for itself): at most one entry per code unit. */
const bmpLiterals = new Map<number, string>()

/** A literal outside a class as a class of its case-equivalents, or undefined when JavaScript's `i` finds them all. */
function literal (node: AST.Character): string | undefined {
  const code = astral(node)
  let text = code === undefined ? bmpLiterals.get(node.value) : undefined
  if (text === undefined) {
    const units = codeUnits(caseEquivalents([{ min: code ?? node.value, max: code ?? node.value }]))
    const own = code === undefined ? units.bmp : isHigh(node) ? units.high : units.low
    text = own.isSubsetOf(javaScriptEquivalents([{ min: node.value, max: node.value }])) ? '' : `[${spell(own)}]`
    if (code === undefined) bmpLiterals.set(node.value, text)
  }
  return text === '' ? undefined : text
}

/** A class with the case-equivalents of its characters and ranges (not of `\w`, `\d`, `\s`: PCRE2 leaves them as they are). */
function characterClass (node: AST.CharacterClass): string | undefined {
  // The members as PCRE2 reads them (a surrogate pair is one character) and as JavaScript does (two units).
  const codePoints: CharRange[] = []
  const units: CharRange[] = []
  const escapes: string[] = []
  const elements = node.elements
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i] as AST.CharacterClassElement
    const next = elements[i + 1]
    if (isHigh(element) && isLow(next)) {
      const code = pairValue(element.value, next.value)
      codePoints.push({ min: code, max: code })
      units.push({ min: element.value, max: element.value }, { min: next.value, max: next.value })
      i++
    } else if (element.type === 'Character' || element.type === 'CharacterClassRange') {
      const [min, max] = element.type === 'Character' ? [element.value, element.value] : [element.min.value, element.max.value]
      const range = { min, max }
      codePoints.push(range)
      units.push(range)
    } else escapes.push(element.raw)
  }
  const { bmp, high, low } = codeUnits(caseEquivalents(codePoints))
  const equivalents = bmp.union(high, low)
  if (equivalents.isSubsetOf(javaScriptEquivalents(units))) return undefined
  return `[${node.negate ? '^' : ''}${escapes.join('')}${spell(equivalents)}]`
}

interface Edit { start: number, end: number, text: string }

const parser = new RegExpParser({ ecmaVersion: 2024 })

/**
 * The pattern with the literals and classes JavaScript's `i` would compare too narrowly spelled
 * out with PCRE2's case-equivalents, and the text each of its nodes had as written (for messages).
 */
export function spellOutCaseless (pattern: AST.Pattern): { pattern: AST.Pattern, written: (node: AST.Node) => string } {
  const edits: Edit[] = []
  visitRegExpAST(pattern, {
    onCharacterEnter (node) {
      if (node.parent.type === 'CharacterClass' || node.parent.type === 'CharacterClassRange') return
      const text = literal(node)
      if (text !== undefined) edits.push({ start: node.start, end: node.end, text })
    },
    onCharacterClassEnter (node) {
      if (node.unicodeSets) return
      const text = characterClass(node)
      if (text !== undefined) edits.push({ start: node.start, end: node.end, text })
    }
  })
  if (edits.length === 0) return { pattern, written: (node) => node.raw }
  edits.sort((a, b) => a.start - b.start)
  const source = pattern.raw
  let rewritten = ''
  let from = 0
  // Where each edit sits in the rewritten text, to find a node's text as written.
  const placed: Array<Edit & { at: number, to: number }> = []
  for (const edit of edits) {
    rewritten += source.slice(from, edit.start)
    placed.push({ ...edit, at: rewritten.length, to: rewritten.length + edit.text.length })
    rewritten += edit.text
    from = edit.end
  }
  rewritten += source.slice(from)
  const original = (position: number): number => {
    let shift = 0
    for (const edit of placed) {
      if (position <= edit.at) break
      if (position < edit.to) return edit.start
      shift = edit.end - edit.to
    }
    return position + shift
  }
  return {
    pattern: parser.parsePattern(rewritten, 0, rewritten.length, { unicode: false, unicodeSets: false }),
    written: (node) => source.slice(original(node.start), original(node.end))
  }
}
