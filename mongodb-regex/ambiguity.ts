// Ambiguous repetition: the patterns whose backtracking time can grow faster than linearly
// with the subject within one match attempt (exponentially, or as a polynomial of degree ≥ 2).
// scslre (the analysis behind eslint-plugin-regexp) finds quantifiers that trade characters
// with each other or with themselves; the rules below add the classic cases it leaves out.
// Super-linear *moves* (`\s+$`, `a.*b` failing on long text: one linear attempt per start
// position) are not refused: maxTimeMS and PCRE2's match limit bound them in MongoDB.
import type { AST } from '@eslint-community/regexpp'
import {
  getFirstCharAfter,
  getFirstConsumedChar,
  isPotentiallyZeroLength,
  toCharSet,
  type ReadonlyFlags
} from 'regexp-ast-analysis'
import { analyse } from 'scslre'
import { analysedPattern } from './analysed-pattern.js'
import type { Quote } from './text-edits.js'

/** A bounded repetition this small cannot blow up, whatever it holds (`(\d{1,3}\.){3}`). */
const SMALL_PRODUCT = 64

// Patterns are read without the u/v flags (read-pattern.ts), so no class holds strings.
type SingleChar = AST.Character | AST.EscapeCharacterSet | AST.AnyCharacterSet | AST.ClassRangesCharacterClass
const isSingleChar = (node: AST.Node): node is SingleChar =>
  node.type === 'Character' || (node.type === 'CharacterSet' && node.kind !== 'property') ||
  (node.type === 'CharacterClass' && !node.unicodeSets)

const repeats = (q: AST.Quantifier): boolean => q.max >= 2

/** Groups of one alternative of one element are transparent: `((a|aa))+` is `(a|aa)+`. */
function unwrap (node: AST.Element): AST.Element {
  while ((node.type === 'Group' || node.type === 'CapturingGroup') && node.alternatives.length === 1 &&
    node.alternatives[0]?.elements.length === 1) {
    node = node.alternatives[0].elements[0] as AST.Element
  }
  return node
}

/** The characters an alternative starts with, one set per position, up to its first non-character item. */
function leadingChars (
  alternative: AST.Alternative, flags: ReadonlyFlags
): { sets: Array<ReturnType<typeof toCharSet>>, complete: boolean } {
  const sets = []
  for (const element of alternative.elements) {
    if (!isSingleChar(element)) return { sets, complete: false }
    sets.push(toCharSet(element, flags))
  }
  return { sets, complete: true }
}

/** Two alternatives can match the same text when no position tells them apart before one ends. */
function canOverlap (a: ReturnType<typeof leadingChars>, b: ReturnType<typeof leadingChars>): boolean {
  for (let i = 0; ; i++) {
    const x = a.sets[i]
    const y = b.sets[i]
    if (x === undefined || y === undefined) return true
    if (x.isDisjointWith(y)) return false
  }
}

/** `(a|aa)+`, `(\w|\d)+`, `(.|.)*`: alternatives under one quantifier that can match alike (not `(Mon|Mar)+`). */
function overlappingAlternatives (q: AST.Quantifier, flags: ReadonlyFlags): boolean {
  const element = unwrap(q.element)
  if (element.type !== 'Group' && element.type !== 'CapturingGroup') return false
  if (element.alternatives.some((alternative) => getFirstConsumedChar(alternative, 'ltr', flags).empty)) return true
  const leads = element.alternatives.map((alternative) => leadingChars(alternative, flags))
  for (let i = 0; i < leads.length; i++) {
    for (let j = i + 1; j < leads.length; j++) {
      if (canOverlap(leads[i] as typeof leads[0], leads[j] as typeof leads[0])) return true
    }
  }
  return false
}

function innerQuantifiers (node: AST.Node, found: AST.Quantifier[] = []): AST.Quantifier[] {
  switch (node.type) {
    case 'Quantifier':
      found.push(node)
      innerQuantifiers(node.element, found)
      break
    case 'Group': case 'CapturingGroup': case 'Pattern':
      for (const a of node.alternatives) innerQuantifiers(a, found)
      break
    case 'Alternative':
      for (const e of node.elements) innerQuantifiers(e, found)
      break
  }
  return found
}

/**
 * `(a+)+`, `(\w+\s?)*`, `(.*a){20}`: a repeated quantifier inside a repetition, unless what it
 * repeats can never be what comes after it (`(\d+,)*`: the comma ends each number).
 */
function nestedRepetition (outer: AST.Quantifier, flags: ReadonlyFlags): boolean {
  for (const inner of innerQuantifiers(outer.element)) {
    if (!repeats(inner)) continue
    const bounded = Number.isFinite(outer.max) && Number.isFinite(inner.max) && outer.max * inner.max <= SMALL_PRODUCT
    if (bounded) continue
    if (!isSingleChar(inner.element)) return true
    const after = getFirstCharAfter(inner, 'ltr', flags)
    if (!toCharSet(inner.element, flags).isDisjointWith(after.char)) return true
  }
  return false
}

/** `\w+\s?\w+`, `.*.*`: two repetitions side by side, with only optional items between, that share characters. */
function adjacentTrade (q: AST.Quantifier, flags: ReadonlyFlags): boolean {
  if (q.max < SMALL_PRODUCT || !isSingleChar(q.element) || q.parent.type !== 'Alternative') return false
  const chars = toCharSet(q.element, flags)
  const siblings = q.parent.elements
  for (let i = siblings.indexOf(q) + 1; i < siblings.length; i++) {
    const next = siblings[i] as AST.Element
    if (next.type === 'Quantifier' && repeats(next) && isSingleChar(next.element) &&
      !chars.isDisjointWith(toCharSet(next.element, flags))) return true
    if (!isPotentiallyZeroLength(next, flags)) return false
  }
  return false
}

/** Four optional or variable items in a row that can take the same character: `a?a?a?a?…aaaa` is exponential. */
const MAX_OPTIONAL_CHAIN = 3

function firstChars (element: AST.Element, flags: ReadonlyFlags): ReturnType<typeof toCharSet> {
  return isSingleChar(element) ? toCharSet(element, flags) : getFirstConsumedChar(element, 'ltr', flags).char
}

/** A run of variable repetitions (`x?`, `x{0,3}`, `(a|b)?`) that all share a character. */
function optionalChain (node: AST.Node, flags: ReadonlyFlags, written: Written): string | undefined {
  if (node.type === 'Alternative') {
    let chain: AST.Quantifier[] = []
    let shared: ReturnType<typeof toCharSet> | undefined
    for (const element of node.elements) {
      if (element.type === 'Quantifier' && element.min < element.max) {
        const chars = firstChars(element.element, flags)
        const common: ReturnType<typeof toCharSet> | undefined = shared === undefined ? chars : shared.intersect(chars)
        if (common.isEmpty) {
          chain = [element]
          shared = chars
        } else {
          chain.push(element)
          shared = common
        }
        if (chain.length > MAX_OPTIONAL_CHAIN) {
          return `'${chain.map(written).join('')}' can split the same text in many ways`
        }
      } else if (!isPotentiallyZeroLength(element, flags)) {
        chain = []
        shared = undefined
      }
    }
  }
  const children = node.type === 'Alternative'
    ? node.elements
    : 'alternatives' in node ? node.alternatives : node.type === 'Quantifier' ? [node.element] : []
  for (const child of children) {
    const found = optionalChain(child, flags, written)
    if (found !== undefined) return found
  }
  return undefined
}

/** A node's text in the pattern as its sender wrote it. */
type Written = (node: AST.Node) => string

/**
 * Names the ambiguous repetition in a pattern (`quote`: its text as written, read-pattern.ts), or undefined when there
 * is none.
 */
export function findAmbiguity (read: AST.Pattern, flags: ReadonlyFlags, quote: Quote): string | undefined {
  const { pattern, written } = analysedPattern(read, flags, quote)
  for (const q of innerQuantifiers(pattern)) {
    if (!repeats(q)) continue
    if (isPotentiallyZeroLength(q.element, flags)) return `'${written(q)}' repeats something that can match nothing`
    if (overlappingAlternatives(q, flags)) return `'${written(q)}' repeats alternatives that can match the same text`
    if (nestedRepetition(q, flags)) return `'${written(q)}' nests repetitions that can split the same text in many ways`
    if (adjacentTrade(q, flags)) return `'${written(q)}' is followed by a repetition that can take the same characters`
  }
  const chain = optionalChain(pattern, flags, written)
  if (chain !== undefined) return chain
  const literal = {
    type: 'RegExpLiteral', pattern, flags, parent: null, start: 0, end: pattern.end, raw: pattern.raw
  } as unknown as AST.RegExpLiteral
  const { reports } = analyse(literal, { maxReports: 1, reportTypes: { Move: false } })
  const report = reports[0]
  if (report === undefined) return undefined
  const where = written(report.type === 'Trade' ? report.startQuant : report.quant)
  return `'${where}' can exchange characters with ` +
    `${report.type === 'Trade' ? `'${written(report.endQuant)}'` : 'itself'}, ` +
    'so failing matches backtrack without bound'
}
