// `$regex` as mongod runs it: PCRE2 10.42 in UTF mode. The pattern is read with MongoDB's
// rules (mongodb-regex/), refused with mongod's codes, and run as the equivalent JavaScript.
import { BSONRegExp } from 'bson'
import { readPattern } from '../mongodb-regex/read-pattern.js'
import { toJavaScript } from '../mongodb-regex/to-javascript.js'
import { CommandError } from './errors.js'

/**
 * Like PCRE2's match limit, a bound on the backtracking of one test: beyond it the test is a
 * non-match, as in mongod, instead of blocking the event loop.
 */
export const BACKTRACK_LIMIT = 1_000_000

type MakeRegExp = (source: string, flags: string) => RegExp

/**
 * V8's own backtrack limit (`%NewRegExpWithBacktrackLimit`), where the process was started with
 * `--allow-natives-syntax` on its command line (`npm run db`, the test runner, and the stand-in
 * process `npm start` runs); a plain RegExp elsewhere. The flag is never set at run time.
 */
function boundedRegExpFactory (): { make: MakeRegExp, bounded: boolean } {
  const plain: MakeRegExp = (source, flags) => new RegExp(source, flags)
  try {
    // A SyntaxError without the flag.
    // eslint-disable-next-line no-new-func
    const native = new Function(
      'source', 'flags', 'limit', 'return %NewRegExpWithBacktrackLimit(source, flags, limit)'
    ) as (s: string, f: string, l: number) => RegExp
    const probe = native('^(a|aa)+$', 'v', 1000)
    if (!(probe instanceof RegExp) || probe.test(`${'a'.repeat(40)}b`)) return { make: plain, bounded: false }
    return { make: (source, flags) => native(source, flags, BACKTRACK_LIMIT), bounded: true }
  } catch {
    return { make: plain, bounded: false }
  }
}

const factory = boundedRegExpFactory()
/** Whether one regex test is bounded here (false only on a V8 without the native). */
export const REGEX_TESTS_BOUNDED = factory.bounded

const VALID_OPTIONS = /^[imsxu]*$/

/** mongod's answers: 51108 for an option it does not know, 2 for a NUL, 51091 for a pattern PCRE2 refuses. */
export function toRegExp (pattern: string, options = ''): RegExp {
  if (!VALID_OPTIONS.test(options)) {
    const flag = [...options].find((o) => !'imsxu'.includes(o))
    throw new CommandError(51108, 'Location51108', `invalid flag in regex options: ${flag ?? options}`)
  }
  if (options.includes('\0')) {
    throw new CommandError(2, 'BadValue', 'Regular expression options string cannot contain an embedded null byte')
  }
  const reading = readPattern(pattern, options)
  if (!reading.ok) {
    if (reading.nul === true) {
      throw new CommandError(2, 'BadValue', 'Regular expression cannot contain an embedded null byte')
    }
    throw new CommandError(51091, 'Location51091', `Regular expression is invalid: ${reading.reason}`)
  }
  const { source, flags } = toJavaScript(reading.pattern, reading.flags)
  return factory.make(source, flags)
}

const SURROGATE = /[\ud800-\udfff]/
/** The sticky twin of each regex, for subjects with characters beyond the BMP. */
const stickyTwins = new WeakMap<RegExp, RegExp>()

/**
 * Whether `re` (from toRegExp) finds a match in `subject`, trying start positions at character
 * boundaries only, as PCRE2 does in UTF mode: V8 may try an empty match such as `\B` or `^$`
 * between the two halves of a surrogate pair, where PCRE2 sees no position at all.
 */
export function testRegExp (re: RegExp, subject: string): boolean {
  re.lastIndex = 0
  if (!SURROGATE.test(subject)) return re.test(subject)
  let sticky = stickyTwins.get(re)
  if (sticky === undefined) {
    sticky = factory.make(re.source, `${re.flags}y`)
    stickyTwins.set(re, sticky)
  }
  for (let at = 0; at <= subject.length; at += (subject.codePointAt(at) ?? 0) > 0xffff ? 2 : 1) {
    sticky.lastIndex = at
    if (sticky.test(subject)) return true
  }
  return false
}

/**
 * A compiled `$regex`. Not a RegExp on purpose: mingo copies RegExps in a query with
 * `new RegExp(…)`, which would drop the backtrack limit; other objects it leaves alone.
 */
export class Pcre2Pattern {
  constructor (readonly regExp: RegExp) {}

  test (subject: string): boolean {
    return testRegExp(this.regExp, subject)
  }
}

export function compilePattern (pattern: string, options = ''): Pcre2Pattern {
  return new Pcre2Pattern(toRegExp(pattern, options))
}

export function fromBSONRegExp (value: BSONRegExp): Pcre2Pattern {
  return compilePattern(value.pattern, value.options)
}
