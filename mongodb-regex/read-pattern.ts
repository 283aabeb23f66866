// MongoDB runs `$regex` with PCRE2 10.42 in UTF mode. This reads a pattern the way PCRE2 would
// and accepts it only when PCRE2 compiles it *and* it means the same in the JavaScript
// form we analyse and run (regexpp's AST). Everything else is refused with the construct named.
// (PCRE2's syntax: https://pcre.org/current/doc/html/pcre2pattern.html)
import { RegExpParser, type AST } from '@eslint-community/regexpp'
import { stripExtended } from './extended.js'

export interface RegexFlags {
  ignoreCase: boolean
  multiline: boolean
  dotAll: boolean
}

/**
 * Who refuses a pattern: `pcre2`, MongoDB's engine itself (MongoDB would answer 51091 or 2), or
 * `service`, this service's own rule for syntax whose meaning differs between PCRE2 and the
 * JavaScript reading it is analysed in (the reason then says how to write it so that it passes).
 */
export type RefusedBy = 'pcre2' | 'service'

export type PatternReading =
  | { ok: true, pattern: AST.Pattern, flags: RegexFlags }
  | { ok: false, reason: string, by: RefusedBy, nul?: boolean }

/** PCRE2's limits: quantifier bounds, parenthesis nesting, group names, lookbehind length. */
const MAX_REPEAT = 65535
const MAX_NESTING = 250
const GROUP_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/
/** An estimate of PCRE2's compiled size (it refuses patterns over 64 KiB of code). */
const MAX_COMPILED_UNITS = 30_000

const parser = new RegExpParser({ ecmaVersion: 2024 })
/** Letter escapes that mean the same in PCRE2 and JavaScript (`\v` is translated, `\x` and `\c` are read below). */
const SAME_LETTER_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S', 'b', 'B', 'n', 'r', 't', 'f', 'v', 'k'])

class Refusal extends Error {
  constructor (reason: string, readonly by: RefusedBy) {
    super(reason)
  }
}
/** PCRE2 would not compile this. */
const refuse = (reason: string): never => { throw new Refusal(reason, 'pcre2') }
/** PCRE2 may well compile this; the service refuses it by its own rule. */
const own = (reason: string): never => { throw new Refusal(reason, 'service') }

/** Letters PCRE2 knows no escape for ("unrecognized character follows \\"). */
const UNKNOWN_TO_PCRE2 = new Set(['i', 'j', 'l', 'm', 'q', 'y', 'F', 'I', 'J', 'L', 'M', 'O', 'T', 'U', 'Y'])
/** PCRE2 escapes the service does not accept, and how to write the same thing so that it passes. */
const ESCAPE_HINTS: Record<string, string> = {
  A: 'write ^ (without the m option)',
  z: 'write $ (without the m option; it also matches before a final newline)',
  Z: 'write $ (without the m option)',
  h: 'write the horizontal spaces you mean as a class, such as [ \\t]',
  H: 'write a negated class, such as [^ \\t]',
  R: 'write (?:\\r\\n|\\n|\\r)',
  N: 'write [^\\n]',
  V: 'write [^\\n\\v\\f\\r]',
  p: 'name the characters in a class, such as [a-zA-Zà-ÿ]',
  P: 'name the characters in a negated class',
  Q: 'escape each special character with \\ instead',
  E: 'escape each special character with \\ instead of \\Q…\\E',
  a: 'write \\x{07}',
  e: 'write \\x{1b}',
  o: 'write \\x{hh}',
  g: 'write \\1 or \\k<name>'
}

/** PCRE2 syntax that JavaScript lacks, found in a pattern JavaScript's parser refused, and how to write it instead. */
const PCRE2_ONLY: Array<[RegExp, string]> = [
  [/\(\?\^?[imnsxJU-]+[:)]/, 'inline options such as (?i) are not accepted: give them in $options ("i", "m", "s", "x")'],
  [/(?:^|[^\\])[*+?}]\+/, 'possessive quantifiers such as a++ are not accepted: write a+'],
  [/\(\?P</, '(?P<name>…) is not accepted: write (?<name>…)'],
  [/\(\?P=/, '(?P=name) is not accepted: write \\k<name>'],
  [/\(\?>/, 'atomic groups (?>…) are not accepted: write (?:…)'],
  [/\(\?\|/, 'branch-reset groups (?|…) are not accepted: write (?:…)'],
  [/\(\?#/, 'comments (?#…) are not accepted: remove them (or use the x option, where # starts a comment)'],
  [/\(\?(?:R|[+-]?\d|&|P>)/, 'recursion and subroutine calls are not accepted'],
  [/\(\?\(/, 'conditional groups (?(…)…) are not accepted'],
  [/\(\*/, '(*…) verbs and settings are not accepted'],
  [/\(\?<[=!](?:[^()]|\([^()]*\))*\)[*+?{]/, 'a quantifier on a lookbehind is not accepted: it repeats nothing, remove it']
]

/** `\x{h…}` and `\xh`: PCRE2's forms, rewritten as the `\uhhhh` JavaScript reads identically. */
function hexEscape (source: string, at: number): { value: number, length: number } {
  if (source[at] === '{') {
    const close = source.indexOf('}', at)
    const digits = close < 0 ? '' : source.slice(at + 1, close)
    if (!/^[0-9a-fA-F]{1,8}$/.test(digits)) refuse('\\x{…} needs hexadecimal digits and a closing }')
    const value = parseInt(digits, 16)
    if (value > 0x10ffff) refuse(`\\x{${digits}} is beyond the last Unicode code point`)
    if (value >= 0xd800 && value <= 0xdfff) refuse(`\\x{${digits}} is a surrogate, which UTF mode does not allow`)
    return { value, length: close - at + 1 }
  }
  const digits = /^[0-9a-fA-F]{0,2}/.exec(source.slice(at))?.[0] ?? ''
  return { value: digits === '' ? 0 : parseInt(digits, 16), length: digits.length }
}

const asJavaScriptEscape = (value: number): string =>
  String.fromCodePoint(value).split('').map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')

/**
 * Reads escapes and classes as PCRE2 does and rewrites the few PCRE2 spellings that JavaScript
 * lacks; refuses the escapes whose meaning differs (`\u`, `\z`, `\h`, octal, POSIX classes…).
 */
function lex (source: string): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string
    if (c === '\\') {
      const next = source[i + 1]
      if (next === undefined) refuse('the pattern ends with a lone backslash')
      if (next === 'x') {
        const { value, length } = hexEscape(source, i + 2)
        out += asJavaScriptEscape(value)
        i += 1 + length
        continue
      }
      if (next === 'u') refuse("\\u escapes do not exist in MongoDB's regex dialect (PCRE2): write \\x{hhhh}")
      if (next === 'c') {
        if (!/[A-Za-z]/.test(source[i + 2] ?? '')) {
          if (/[\x20-\x7e]/.test(source[i + 2] ?? '')) own('\\c followed by anything but a letter is not accepted: write the control character as \\x{hh}')
          refuse('\\c must be followed by a printable ASCII character')
        }
        out += source.slice(i, i + 3)
        i += 2
        continue
      }
      if (next === '0' && /[0-9]/.test(source[i + 2] ?? '')) own('octal escapes are not accepted: write \\x{hh}')
      if (/[1-9]/.test(next) && inClass) own(`\\${next} in a character class is an octal escape in PCRE2, not accepted: write \\x{hh}`)
      if (/[A-Za-z]/.test(next) && !SAME_LETTER_ESCAPES.has(next)) {
        if (UNKNOWN_TO_PCRE2.has(next)) refuse(`\\${next} is no escape PCRE2 knows`)
        own(`\\${next} is not accepted, since it means something else (or nothing) in JavaScript: ${ESCAPE_HINTS[next] ?? 'write what it matches without it'}`)
      }
      if (next === 'B' && inClass) refuse('\\B is not allowed in a character class')
      if (next === 'k' && source[i + 2] !== '<') {
        if (source[i + 2] === "'" || source[i + 2] === '{') own("\\k'name' and \\k{name} are not accepted: write \\k<name>")
        refuse('\\k must name a group: \\k<name>')
      }
      out += c + next
      i++
      continue
    }
    if (inClass) {
      if (c === '[' && source[i + 1] === ':') own('POSIX classes such as [[:alpha:]] are not accepted: write the characters, e.g. [a-zA-Z]')
      if (c === '[' && /[.=]/.test(source[i + 1] ?? '')) refuse('POSIX collating elements such as [[.a.]] are not supported by PCRE2')
      if (c === ']') inClass = false
      out += c
      continue
    }
    if (c === '[') {
      inClass = true
      const first = source[i + 1] === '^' ? i + 2 : i + 1
      if (source[first] === ']') {
        // PCRE2 reads a ']' there as a member, so `[]` and `[^]` alone never end.
        if (!/(?:^|[^\\])\]/.test(source.slice(first + 1))) refuse('a character class is not closed: PCRE2 reads a \']\' right after \'[\' or \'[^\' as a member')
        own("a class cannot start with ']' ([] and [^] mean different things to MongoDB and JavaScript): escape it as \\]")
      }
    }
    out += c
  }
  return out
}

function checkClass (node: AST.CharacterClass): void {
  const elements = node.elements
  elements.forEach((element, index) => {
    if (element.type !== 'Character' || element.raw !== '-' || index === 0 || index === elements.length - 1) return
    const around = [elements[index - 1], elements[index + 1]]
    if (around.some((e) => e?.type === 'CharacterSet')) refuse(`'${node.raw}' has a range next to a class escape such as \\d, which PCRE2 refuses: put '-' first or last`)
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
      for (const element of node.elements) {
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
    if (length === undefined) refuse(`the lookbehind '${node.raw}' can match text of different lengths, which PCRE2 10.42 refuses`)
    if ((length as number) > MAX_REPEAT) refuse(`the lookbehind '${node.raw}' is longer than ${MAX_REPEAT} characters`)
  }
}

/** Roughly PCRE2's compiled size: a repeated group is copied once per repetition. */
function compiledUnits (node: AST.Node): number {
  switch (node.type) {
    case 'Quantifier': {
      const inner = compiledUnits(node.element)
      if (node.element.type === 'Character' || node.element.type === 'CharacterSet' || node.element.type === 'CharacterClass') return inner + 2
      const copies = Number.isFinite(node.max) ? node.max : node.min + 1
      return inner * Math.max(copies, 1) + 2
    }
    case 'Alternative': return node.elements.reduce((sum, e) => sum + compiledUnits(e), 1)
    case 'Group': case 'CapturingGroup': case 'Pattern': return node.alternatives.reduce((sum, a) => sum + compiledUnits(a), 3)
    case 'Assertion': return 'alternatives' in node ? node.alternatives.reduce((sum, a) => sum + compiledUnits(a), 3) : 1
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
      if (node.type === 'CapturingGroup' && node.name !== null && !GROUP_NAME.test(node.name)) refuse(`the group name '${node.name}' is not accepted: 1–32 ASCII letters, digits or '_', not starting with a digit`)
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
      if (node.min > MAX_REPEAT || (Number.isFinite(node.max) && node.max > MAX_REPEAT)) refuse(`the repetition '${node.raw}' has a bound over ${MAX_REPEAT}`)
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
      if (group === undefined || group.end > node.start) own(`${node.raw} refers to a group that has not closed before it, which MongoDB and JavaScript match differently: refer only to groups closed before the reference`)
      if (inLookbehind) own(`${node.raw} inside a lookbehind is not accepted: move the reference out of the lookbehind`)
    }
  }
}

/**
 * Reads a `$regex` pattern with its options (`i m s x`) as MongoDB's PCRE2 would. The result
 * is the pattern's AST, whose JavaScript meaning is PCRE2's once translated (to-javascript.ts).
 */
export function readPattern (source: string, options = ''): PatternReading {
  if (source.includes('\0')) return { ok: false, reason: 'the pattern contains a NUL character, which MongoDB refuses', by: 'pcre2', nul: true }
  try {
    const lexed = lex(options.includes('x') ? stripExtended(source) : source)
    let pattern: AST.Pattern
    try {
      pattern = parser.parsePattern(lexed, 0, lexed.length, { unicode: false, unicodeSets: false })
    } catch (error) {
      // JavaScript's syntax is narrower than PCRE2's: a construct only PCRE2 has is the service's refusal.
      const pcre2Only = PCRE2_ONLY.find(([construct]) => construct.test(source))
      if (pcre2Only !== undefined) return own(pcre2Only[1])
      const message = (error as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')
      return refuse(message.charAt(0).toLowerCase() + message.slice(1))
    }
    walk(pattern, 0, false)
    if (compiledUnits(pattern) > MAX_COMPILED_UNITS) refuse('the pattern repeats groups so often that PCRE2 would refuse it as too large')
    return { ok: true, pattern, flags: { ignoreCase: options.includes('i'), multiline: options.includes('m'), dotAll: options.includes('s') } }
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, reason: error.message, by: error.by }
    throw error
  }
}
