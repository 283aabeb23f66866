// The lexer of read-pattern.ts: a PCRE2 pattern read escape by escape and class by class, and
// written as the JavaScript text regexpp parses (without the u flag), or refused with the
// construct named.
import { type PlacedEdit } from './text-edits.js'
import { classRange, unit } from './utf16.js'

/**
 * Who refuses a pattern: `pcre2`, MongoDB's engine itself (MongoDB would answer 51091 or 2), or
 * `service`, this service's own rule for syntax whose meaning differs between PCRE2 and the
 * JavaScript reading it is analysed in (the reason then says how to write it so that it passes).
 */
export type RefusedBy = 'pcre2' | 'service'

export class Refusal extends Error {
  constructor (reason: string, readonly by: RefusedBy) {
    super(reason)
  }
}
/** PCRE2 would not compile this. */
export const refuse = (reason: string): never => { throw new Refusal(reason, 'pcre2') }
/** PCRE2 may well compile this; the service refuses it by its own rule. */
export const own = (reason: string): never => { throw new Refusal(reason, 'service') }

/** Letter escapes that mean the same in PCRE2 and JavaScript (`\v` is translated, `\x` and `\c` are read below). */
const SAME_LETTER_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S', 'b', 'B', 'n', 'r', 't', 'f', 'v', 'k'])

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
  String.fromCodePoint(value).split('').map((half) => unit(half.charCodeAt(0))).join('')

/**
 * A class member being read: its JavaScript text, where it was written, and the character it is (none for `\d`,
 * `\v`…).
 */
interface Member { text: string, start: number, end: number, value: number | undefined }

/** The characters letter and digit escapes stand for in a class; the others (`\d`, `\v` vertical space…) are sets. */
const ESCAPED_CHARACTERS: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, f: 0x0c, b: 0x08, 0: 0 }

/** The character at `at`, both halves of a surrogate pair; a lone surrogate is no UTF-8 that PCRE2 could be given. */
function characterAt (source: string, at: number): string {
  const code = source.codePointAt(at) as number
  if (code >= 0xd800 && code <= 0xdfff) refuse('the pattern holds a lone surrogate, which is not Unicode text')
  return String.fromCodePoint(code)
}

/**
 * A class's members as JavaScript reads them, or undefined when none is beyond U+FFFF (they stay as
 * written). Such members and ranges are spelled out in UTF-16 (utf16.ts): split in code units, a
 * range like [😀-🙏] would be out of order for JavaScript, while PCRE2 compiles it.
 */
function classText (members: Member[], written: string): string | undefined {
  if (!members.some(({ value }) => value !== undefined && value > 0xffff)) return undefined
  // A '-' kept literal is escaped, so that no range forms between the units written out.
  const text = (member: Member): string => member.text === '-' ? '\\-' : member.text
  let out = ''
  for (let k = 0; k < members.length; k++) {
    const from = members[k] as Member
    const to = members[k + 2]
    if (members[k + 1]?.text !== '-' || to === undefined) {
      out += from.value !== undefined && from.value > 0xffff ? classRange(from.value, from.value) : text(from)
      continue
    }
    if (from.value === undefined || to.value === undefined) {
      refuse(`'${written}' has a range next to a class escape such as \\d, which PCRE2 refuses: put '-' first or last`)
    }
    if ((to.value as number) < (from.value as number)) refuse('range out of order in character class')
    out += (to.value as number) > 0xffff
      ? classRange(from.value as number, to.value as number)
      : `${text(from)}-${text(to)}`
    k += 2
  }
  return out
}

/**
 * Refuses the escape at `i` (a backslash, then `next`) when MongoDB and JavaScript read it
 * differently or PCRE2 does not know it; `\x` escapes are read before.
 */
function checkEscape (source: string, i: number, next: string, inClass: boolean): void {
  if (next === 'u') refuse("\\u escapes do not exist in MongoDB's regex dialect (PCRE2): write \\x{hhhh}")
  if (next === 'c') {
    if (!/[A-Za-z]/.test(source[i + 2] ?? '')) {
      if (/[\x20-\x7e]/.test(source[i + 2] ?? '')) {
        own('\\c followed by anything but a letter is not accepted: write the control character as \\x{hh}')
      }
      refuse('\\c must be followed by a printable ASCII character')
    }
    return
  }
  if (next === '0' && /[0-9]/.test(source[i + 2] ?? '')) own('octal escapes are not accepted: write \\x{hh}')
  if (/[1-9]/.test(next) && inClass) {
    own(`\\${next} in a character class is an octal escape in PCRE2, not accepted: write \\x{hh}`)
  }
  if (/[A-Za-z]/.test(next) && !SAME_LETTER_ESCAPES.has(next)) {
    if (UNKNOWN_TO_PCRE2.has(next)) refuse(`\\${next} is no escape PCRE2 knows`)
    own(`\\${next} is not accepted, since it means something else (or nothing) in JavaScript: ` +
      `${ESCAPE_HINTS[next] ?? 'write what it matches without it'}`)
  }
  if (next === 'B' && inClass) refuse('\\B is not allowed in a character class')
  if (next === 'k' && source[i + 2] !== '<') {
    if (source[i + 2] === "'" || source[i + 2] === '{') own("\\k'name' and \\k{name} are not accepted: write \\k<name>")
    refuse('\\k must name a group: \\k<name>')
  }
}

/**
 * Reads escapes and classes as PCRE2 does and rewrites the few PCRE2 spellings that JavaScript
 * lacks; refuses the escapes whose meaning differs (`\u`, `\z`, `\h`, octal, POSIX classes…).
 * The pieces rewritten are listed, for messages that quote the pattern as written.
 */
export function lex (source: string): { text: string, edits: PlacedEdit[] } {
  let out = ''
  const edits: PlacedEdit[] = []
  const write = (text: string, start: number, end: number): void => {
    if (text !== source.slice(start, end)) edits.push({ start, end, at: out.length, to: out.length + text.length })
    out += text
  }
  /** The members of the class being read, undefined outside classes. */
  let members: Member[] | undefined
  let classStart = 0
  const put = (text: string, start: number, end: number, value: number | undefined): void => {
    if (members === undefined) write(text, start, end)
    else members.push({ text, start, end, value })
  }
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string
    const inClass = members !== undefined
    if (c === '\\') {
      const next = source[i + 1]
      if (next === undefined) refuse('the pattern ends with a lone backslash')
      if (next === 'x') {
        const { value, length } = hexEscape(source, i + 2)
        put(asJavaScriptEscape(value), i, i + 2 + length, value)
        i += 1 + length
        continue
      }
      checkEscape(source, i, next, inClass)
      if (next === 'c') {
        put(source.slice(i, i + 3), i, i + 3, source.charCodeAt(i + 2) % 32)
        i += 2
        continue
      }
      const escaped = characterAt(source, i + 1)
      const value = /[A-Za-z0-9]/.test(next) ? ESCAPED_CHARACTERS[next] : escaped.codePointAt(0)
      put(c + escaped, i, i + 1 + escaped.length, value)
      i += escaped.length
      continue
    }
    if (members !== undefined) {
      if (c === '[' && source[i + 1] === ':') {
        own('POSIX classes such as [[:alpha:]] are not accepted: write the characters, e.g. [a-zA-Z]')
      }
      if (c === '[' && /[.=]/.test(source[i + 1] ?? '')) {
        refuse('POSIX collating elements such as [[.a.]] are not supported by PCRE2')
      }
      if (c === ']') {
        const text = classText(members, source.slice(classStart, i + 1))
        if (text === undefined) for (const member of members) write(member.text, member.start, member.end)
        else write(text, (members[0] as Member).start, (members.at(-1) as Member).end)
        members = undefined
        write(c, i, i + 1)
        continue
      }
      const character = characterAt(source, i)
      put(character, i, i + character.length, character.codePointAt(0))
      i += character.length - 1
      continue
    }
    if (c === '[') {
      const first = source[i + 1] === '^' ? i + 2 : i + 1
      if (source[first] === ']') {
        // PCRE2 reads a ']' there as a member, so `[]` and `[^]` alone never end.
        if (!/(?:^|[^\\])\]/.test(source.slice(first + 1))) {
          refuse('a character class is not closed: PCRE2 reads a \']\' right after \'[\' or \'[^\' as a member')
        }
        own("a class cannot start with ']' ([] and [^] mean different things to MongoDB and JavaScript): " +
          'escape it as \\]')
      }
      write(source.slice(i, first), i, first)
      members = []
      classStart = i
      i = first - 1
      continue
    }
    const character = characterAt(source, i)
    write(character, i, i + character.length)
    i += character.length - 1
  }
  // An unclosed class: JavaScript's parser says so.
  for (const member of members ?? []) write(member.text, member.start, member.end)
  return { text: out, edits }
}
