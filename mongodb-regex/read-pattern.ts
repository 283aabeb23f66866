// MongoDB runs `$regex` with PCRE2 10.42 in UTF mode. This reads a pattern the way PCRE2 would
// and accepts it only when PCRE2 compiles it *and* it means the same in the JavaScript
// form we analyse and run (regexpp's AST). Everything else is refused with the construct named.
// (PCRE2's syntax: https://pcre.org/current/doc/html/pcre2pattern.html)
import { RegExpParser, type AST } from '@eslint-community/regexpp'
import { stripExtended } from './extended.js'
import { lex, own, refuse, Refusal, type RefusedBy } from './lex-pattern.js'
import { quoteThrough, type Quote } from './text-edits.js'
import { isHigh, isLow } from './utf16.js'

export type { RefusedBy }

export interface RegexFlags {
  ignoreCase: boolean
  multiline: boolean
  dotAll: boolean
}

export type PatternReading =
  /** `quote`: the text of a node's span as the client wrote it, for messages. */
  | { ok: true, pattern: AST.Pattern, flags: RegexFlags, quote: Quote }
  | { ok: false, reason: string, by: RefusedBy, nul?: boolean }

/** PCRE2's limits: quantifier bounds, parenthesis nesting, group names, lookbehind length. */
const MAX_REPEAT = 65535
const MAX_NESTING = 250
const GROUP_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/
/** An estimate of PCRE2's compiled size (it refuses patterns over 64 KiB of code). */
const MAX_COMPILED_UNITS = 30_000

const parser = new RegExpParser({ ecmaVersion: 2024 })

/** PCRE2 syntax that JavaScript lacks, found in a pattern JavaScript's parser refused, and how to write it instead. */
const PCRE2_ONLY: Array<[RegExp, string]> = [
  [
    /\(\?(?:\^[imnsxJU]*|[imnsxJU-]+)[:)]/,
    'inline options such as (?i) are not accepted: give them in $options ("i", "m", "s", "x")'
  ],
  [/(?:^|[^\\])[*+?}]\+/, 'possessive quantifiers such as a++ are not accepted: write a+'],
  [/\(\?P</, '(?P<name>…) is not accepted: write (?<name>…)'],
  [/\(\?'/, "(?'name'…) is not accepted: write (?<name>…)"],
  [/\(\?P=/, '(?P=name) is not accepted: write \\k<name>'],
  [/\(\?>/, 'atomic groups (?>…) are not accepted: write (?:…)'],
  [/\(\?\|/, 'branch-reset groups (?|…) are not accepted: write (?:…)'],
  [/\(\?#/, 'comments (?#…) are not accepted: remove them (or use the x option, where # starts a comment)'],
  [/\(\?(?:R|[+-]?\d|&|P>)/, 'recursion and subroutine calls are not accepted'],
  [/\(\?\(/, 'conditional groups (?(…)…) are not accepted'],
  [/\(\?C/, 'callouts (?C…) are not accepted'],
  [/\(\?<?\*/, 'non-atomic lookarounds (?*…) and (?<*…) are not accepted: write (?=…) or (?<=…)'],
  [/\(\*/, '(*…) verbs and settings are not accepted'],
  [
    /\(\?<[=!](?:[^()]|\([^()]*\))*\)[*+?{]/,
    'a quantifier on a lookbehind is not accepted: it repeats nothing, remove it'
  ]
]

function checkClass (node: AST.CharacterClass): void {
  const elements = node.elements
  elements.forEach((element, index) => {
    // PCRE2 reads \v as a set of characters (vertical space), which cannot end a range.
    if (element.type === 'CharacterClassRange' && (element.min.raw === '\\v' || element.max.raw === '\\v')) {
      refuse(`'${node.raw}' has a range ending with \\v, a set of characters, which PCRE2 refuses`)
    }
    if (element.type !== 'Character' || element.raw !== '-' || index === 0 || index === elements.length - 1) return
    const [before, after] = [elements[index - 1], elements[index + 1]]
    // Right after a range, '-' is a member for PCRE2 ([a-c-\d]); elsewhere beside a class escape it makes a
    // range it refuses.
    if (before?.type === 'CharacterSet' || (after?.type === 'CharacterSet' && before?.type !== 'CharacterClassRange')) {
      refuse(`'${node.raw}' has a range next to a class escape such as \\d, which PCRE2 refuses: put '-' first or last`)
    }
  })
}

/** The fixed length of what a node matches, or undefined when it can vary (lookbehinds need it fixed). */
function fixedLength (node: AST.Node): number | undefined {
  switch (node.type) {
    case 'Character': case 'CharacterSet': case 'CharacterClass': case 'ExpressionCharacterClass': return 1
    case 'Assertion': return 0
    case 'Backreference': return undefined
    case 'Quantifier': {
      const inner = fixedLength(node.element)
      return inner === undefined || node.min !== node.max ? undefined : inner * node.min
    }
    case 'Alternative': {
      let total = 0
      for (const [index, element] of node.elements.entries()) {
        // A character beyond U+FFFF is two code units here and one for PCRE2: its low surrogate counts it.
        const next = node.elements[index + 1]
        if (isHigh(element) && isLow(next?.type === 'Quantifier' ? next.element : next)) continue
        const length = fixedLength(element)
        if (length === undefined) return undefined
        total += length
      }
      return total
    }
    case 'Group': case 'CapturingGroup': {
      const lengths = new Set(node.alternatives.map(fixedLength))
      return lengths.size === 1 ? [...lengths][0] : undefined
    }
    default: return undefined
  }
}

function checkLookbehind (node: AST.LookbehindAssertion): void {
  for (const alternative of node.alternatives) {
    const length = fixedLength(alternative)
    if (length === undefined) {
      refuse(`the lookbehind '${node.raw}' can match text of different lengths, which PCRE2 10.42 refuses`)
    }
    if ((length as number) > MAX_REPEAT) refuse(`the lookbehind '${node.raw}' is longer than ${MAX_REPEAT} characters`)
  }
}

/** Roughly PCRE2's compiled size: a repeated group is copied once per repetition. */
function compiledUnits (node: AST.Node): number {
  switch (node.type) {
    case 'Quantifier': {
      const inner = compiledUnits(node.element)
      if (node.element.type === 'Character' || node.element.type === 'CharacterSet' ||
        node.element.type === 'CharacterClass') return inner + 2
      const copies = Number.isFinite(node.max) ? node.max : node.min + 1
      return inner * Math.max(copies, 1) + 2
    }
    case 'Alternative': return node.elements.reduce((sum, e) => sum + compiledUnits(e), 1)
    case 'Group': case 'CapturingGroup': case 'Pattern':
      return node.alternatives.reduce((sum, a) => sum + compiledUnits(a), 3)
    case 'Assertion':
      return 'alternatives' in node ? node.alternatives.reduce((sum, a) => sum + compiledUnits(a), 3) : 1
    case 'CharacterClass': return 10
    default: return 2
  }
}

function walk (node: AST.Node, depth: number, inLookbehind: boolean): void {
  switch (node.type) {
    case 'Pattern':
      for (const a of node.alternatives) walk(a, depth, inLookbehind)
      return
    case 'Alternative':
      for (const e of node.elements) walk(e, depth, inLookbehind)
      return
    case 'CapturingGroup': case 'Group':
      if (node.type === 'CapturingGroup' && node.name !== null && !GROUP_NAME.test(node.name)) {
        refuse(`the group name '${node.name}' is not accepted: ` +
          "1–32 ASCII letters, digits or '_', not starting with a digit")
      }
      if (depth + 1 > MAX_NESTING) refuse(`parentheses are nested deeper than ${MAX_NESTING} levels`)
      for (const a of node.alternatives) walk(a, depth + 1, inLookbehind)
      return
    case 'Assertion':
      if (node.kind === 'lookahead' || node.kind === 'lookbehind') {
        if (depth + 1 > MAX_NESTING) refuse(`parentheses are nested deeper than ${MAX_NESTING} levels`)
        if (node.kind === 'lookbehind') checkLookbehind(node)
        for (const a of node.alternatives) walk(a, depth + 1, inLookbehind || node.kind === 'lookbehind')
      }
      return
    case 'Quantifier':
      if (node.min > MAX_REPEAT || (Number.isFinite(node.max) && node.max > MAX_REPEAT)) {
        refuse(`the repetition '${node.raw}' has a bound over ${MAX_REPEAT}`)
      }
      walk(node.element, depth, inLookbehind)
      return
    case 'CharacterClass':
      checkClass(node)
      return
    case 'Character':
      if (/^\\[1-9]/.test(node.raw)) refuse(`${node.raw} refers to a group that does not exist`)
      if (node.raw === '\\k') refuse('\\k<name> must name a group of the pattern')
      return
    case 'Backreference': {
      const group = Array.isArray(node.resolved) ? node.resolved[0] : node.resolved
      if (group === undefined || group.end > node.start) {
        own(`${node.raw} refers to a group that has not closed before it, ` +
          'which MongoDB and JavaScript match differently: refer only to groups closed before the reference')
      }
      if (inLookbehind) own(`${node.raw} inside a lookbehind is not accepted: move the reference out of the lookbehind`)
    }
  }
}

/**
 * Reads a `$regex` pattern with its options (`i m s x`) as MongoDB's PCRE2 would. The result
 * is the pattern's AST, whose JavaScript meaning is PCRE2's once translated (to-javascript.ts).
 */
export function readPattern (source: string, options = ''): PatternReading {
  if (source.includes('\0')) {
    return { ok: false, reason: 'the pattern contains a NUL character, which MongoDB refuses', by: 'pcre2', nul: true }
  }
  try {
    const written = options.includes('x') ? stripExtended(source) : source
    const lexed = lex(written)
    let pattern: AST.Pattern
    try {
      pattern = parser.parsePattern(lexed.text, 0, lexed.text.length, { unicode: false, unicodeSets: false })
    } catch (error) {
      // JavaScript's syntax is narrower than PCRE2's: a construct only PCRE2 has is the service's refusal.
      const pcre2Only = PCRE2_ONLY.find(([construct]) => construct.test(source))
      if (pcre2Only !== undefined) return own(pcre2Only[1])
      const message = (error as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')
      return refuse(message.charAt(0).toLowerCase() + message.slice(1))
    }
    walk(pattern, 0, false)
    if (compiledUnits(pattern) > MAX_COMPILED_UNITS) {
      refuse('the pattern repeats groups so often that PCRE2 would refuse it as too large')
    }
    const flags = { ignoreCase: options.includes('i'), multiline: options.includes('m'), dotAll: options.includes('s') }
    return { ok: true, pattern, flags, quote: quoteThrough(written, lexed.edits) }
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.message, by: error.by }
    throw error
  }
}
