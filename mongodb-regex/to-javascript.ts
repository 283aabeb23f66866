// A pattern read by read-pattern.ts, written as a JavaScript RegExp (`v` mode, which reads
// code points as PCRE2's UTF mode does) that matches what MongoDB's PCRE2 matches. The
// differences handled (pcre2pattern, "Newline conventions", "Generic character types"):
// `.` stops only at \n; `$` also matches before a final \n; `^`/`$` with `m` break at \n only;
// `\s` is ASCII white space; `\v` is vertical white space. `x` was stripped while reading.
import type { AST } from '@eslint-community/regexpp'
import type { RegexFlags } from './read-pattern.js'
import type { CharRange } from 'refa'
import { SPACE, VERTICAL_SPACE } from './pcre2-sets.js'
import { classMembers, isHigh, isLow, pairValue } from './utf16.js'

const codePoint = (value: number): string => `\\u{${value.toString(16)}}`
/** Ranges of code points as the members of a `v`-mode class. */
const codePoints = (ranges: readonly CharRange[]): string =>
  ranges.map(({ min, max }) => min === max ? codePoint(min) : `${codePoint(min)}-${codePoint(max)}`).join('')

function character (node: AST.Character): string {
  return node.raw === '\\v' ? `[${codePoints(VERTICAL_SPACE)}]` : codePoint(node.value)
}

function characterSet (node: AST.CharacterSet, flags: RegexFlags): string {
  switch (node.kind) {
    case 'any': return flags.dotAll ? '.' : '[^\\n]'
    case 'space': return `[${node.negate ? '^' : ''}${codePoints(SPACE)}]`
    case 'digit': return node.negate ? '\\D' : '\\d'
    case 'word': return node.negate ? '\\W' : '\\w'
    default: throw new Error(`unexpected character set ${node.raw}`)
  }
}

function classElements (elements: AST.CharacterClass['elements'], flags: RegexFlags): string {
  // Members beyond U+FFFF are runs of surrogates (utf16.ts); `v` mode reads the characters they pair into.
  const { astral, rest } = classMembers(elements)
  let out = ''
  for (const element of rest) {
    if (element.type === 'Character') out += character(element)
    else if (element.type === 'CharacterClassRange') {
      out += codePoints([{ min: element.min.value, max: element.max.value }])
    } else out += emit(element as AST.Node, flags)
  }
  return out + codePoints(astral)
}

function alternative (node: AST.Alternative, flags: RegexFlags): string {
  let out = ''
  const elements = node.elements
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i] as AST.Element
    const next = elements[i + 1]
    // Without the u flag a surrogate pair is two characters; PCRE2 (UTF) and `v` mode see one.
    if (isHigh(element) && isLow(next)) {
      out += codePoint(pairValue(element.value, next.value))
      i++
    } else if (isHigh(element) && next?.type === 'Quantifier' && isLow(next.element)) {
      out += `(?:${codePoint(pairValue(element.value, next.element.value))})${quantifierSuffix(next)}`
      i++
    } else out += emit(element, flags)
  }
  return out
}

const alternatives = (nodes: AST.Alternative[], flags: RegexFlags): string =>
  nodes.map((a) => alternative(a, flags)).join('|')

function quantifierSuffix (node: AST.Quantifier): string {
  const { min, max } = node
  const bounds = min === 0 && max === Infinity
    ? '*'
    : min === 1 && max === Infinity ? '+' : min === 0 && max === 1 ? '?' : `{${min},${max === Infinity ? '' : max}}`
  return bounds + (node.greedy ? '' : '?')
}

function assertion (node: AST.Assertion, flags: RegexFlags): string {
  switch (node.kind) {
    case 'start': return flags.multiline ? '(?:(?<![\\s\\S])|(?<=\\n)(?=[\\s\\S]))' : '^'
    case 'end': return flags.multiline ? '(?=\\n|(?![\\s\\S]))' : '(?=\\n?(?![\\s\\S]))'
    case 'word': return node.negate ? '\\B' : '\\b'
    case 'lookahead': return `(?${node.negate ? '!' : '='}${alternatives(node.alternatives, flags)})`
    case 'lookbehind': return `(?<${node.negate ? '!' : '='}${alternatives(node.alternatives, flags)})`
  }
}

function emit (node: AST.Node, flags: RegexFlags): string {
  switch (node.type) {
    case 'Character': return character(node)
    case 'CharacterSet': return characterSet(node, flags)
    case 'CharacterClass': return `[${node.negate ? '^' : ''}${classElements(node.elements, flags)}]`
    case 'Assertion': return assertion(node, flags)
    case 'Group': return `(?:${alternatives(node.alternatives, flags)})`
    case 'CapturingGroup':
      return `(${node.name === null ? '' : `?<${node.name}>`}${alternatives(node.alternatives, flags)})`
    case 'Backreference': return typeof node.ref === 'number' ? `\\${node.ref}` : `\\k<${node.ref}>`
    case 'Quantifier': {
      // `v` mode refuses a quantified assertion, which Annex B allowed: a group keeps its meaning.
      const element = emit(node.element, flags)
      return (node.element.type === 'Assertion' ? `(?:${element})` : element) + quantifierSuffix(node)
    }
    case 'Pattern': return alternatives(node.alternatives, flags)
    default: throw new Error(`unexpected regex node ${node.type}`)
  }
}

/** The JavaScript source and flags that match as MongoDB's PCRE2 matches the pattern read. */
export function toJavaScript (pattern: AST.Pattern, flags: RegexFlags): { source: string, flags: string } {
  return { source: emit(pattern, flags), flags: `v${flags.ignoreCase ? 'i' : ''}${flags.dotAll ? 's' : ''}` }
}
