// Patterns for the PCRE2 oracle and the ReDoS property: hand-picked (every escape, class,
// group and quantifier form, and each class of the hostile-input report) and generated.
import { SeededRandom } from '../../demo-data/random.js'

/**
 * Classes whose members or ranges go beyond U+FFFF, which PCRE2 compiles in UTF mode: emoji and
 * Deseret ranges, from a character below U+FFFF to one beyond it, negated, raw or as \x{…}.
 */
export const ASTRAL_CLASSES = [
  '[😀-🙏]', '[\\x{1F600}-\\x{1F64F}]', '[\\x{10400}-\\x{10428}]', '[a-\\x{1F600}]', '[^😀-🙏]',
  '[^\\x{10400}-\\x{1044F}]', '[^a-😀]', '^[a-z😀-🙏]+$', 'name [😀-🙏]{1,3}$', '[\\x{FFFF}-\\x{10000}]',
  '[\\x{103FF}-\\x{10400}-a]', '^[\\x{10000}-\\x{10FFFF}]$', '[--😀]', '[a-c-😀]',
  '[😀-🙏-]', '[\\-😀-🙏]', '[😀]', '(?<=[😀-🙏])x', '^(?:[😀-🙏]|x)+$', '(😀|😃)+$'
]

/** Ranges beyond U+FFFF that PCRE2 refuses: out of order, or next to a class escape. */
export const ASTRAL_REFUSED = [
  '[🙏-😀]', '[\\x{10428}-\\x{10400}]', '[\\x{1F600}-a]', '[😀-\\x{FFFF}]', '[\\d-😀]', '[😀-\\w]',
  '[\\v-😀]'
]

/**
 * Ambiguous through characters beyond U+FFFF, which PCRE2 reads as one character each: a class
 * and a literal, `.` or a negated class taking the same emoji, a repeated emoji. Each with a pump
 * that makes PCRE2 backtrack on it.
 */
export const UNSAFE_ASTRAL: Array<[string, string]> = [
  ['([😀-🙏]|😃)+$', '😃'], ['([\\x{1F600}-\\x{1F64F}]x|😃x)+$', '😃x'], ['([^😀-🙏]|🚀)+$', '🚀'],
  ['([^😀]|🚀)+$', '🚀'], ['(.x|😀x)+$', '😀x'], ['(?:😀+)+$', '😀'], ['([a-\\x{1F600}]|😀)+$', '😀'],
  ['([😀-🙏]|[😃-🚀])+$', '😃']
]

/**
 * Ambiguous because PCRE2 reads `.`, `\v` and `\S` more widely than JavaScript does (`.` stops at
 * \n only, `\v` is every vertical space, `\s` is ASCII white space only), each with a pump and a
 * suffix that make PCRE2 backtrack.
 */
export const UNSAFE_AS_PCRE2_READS: Array<[string, string, string]> = [
  ['(.|\\r)+$', '\r', '\n\n'], ['(.|\\x{2028})+$', '\u2028', '\n\n'], ['(\\v|\\n)+$', '\n', 'x'],
  ['([\\v]|\\x{85})+$', '\u0085', 'x'], ['(?:\\v|\\r)+$', '\r', 'x'],
  ['(\\S|\\x{a0})+$', '\u00a0', ' '], ['([^\\s]|\\x{2003})+$', '\u2003', ' '], ['([\\S]|\\x{a0})+$', '\u00a0', ' ']
]

/** Patterns PCRE2 10.42 refuses (MongoDB answers 51091 or 2): we must refuse them all. */
export const PCRE2_REFUSES = [
  'a{65536}', 'a{1,65536}', 'a{70000,}', '(?:ab){0,99999}', '\\u0041', '\\u{41}', '[\\u0041]', '[]', '[^]',
  '[]a]x[', '\\1', '(a)\\2', '\\3(a)(b)',
  '(?<=a+)b', '(?<=a*)b', '(?<!ab?)c', '(?<=a|b+)c', '(?<=(a|bc))d', '(?<a$>x)', '(?<$a>x)', '(?<a.b>x)',
  '(?<abcdefghijklmnopqrstuvwxyz1234567>x)',
  '(', ')', '[a-', 'a**', '*a', '+', '?', 'a{2,1}', '[z-a]', '[\\d-z]', '[a-\\w]', '[[.a.]]', '[[=a=]]',
  '\\x{110000}', '\\x{d800}', '\\c', '\\',
  '(?<n>a)(?<n>b)', '\\k<missing>', `${'('.repeat(251)}a${')'.repeat(251)}`.slice(0, 500), '(?:abc){30000}',
  '(abc){25000}',
  '[\\v-z]', '[a-\\v]', '(?<=(?:😀|ab))c',
  ...ASTRAL_REFUSED
]

/**
 * PCRE2 syntax that JavaScript lacks, which PCRE2 compiles but the service refuses by its own rule,
 * each with what its reason must show: how to write it so that it is accepted.
 */
export const OWN_RULE: Array<[string, RegExp]> = [
  ['(?i)yoga', /\$options/], ['(?i:yoga)', /\$options/], ['a++b', /write a\+/], ['(?P<year>\\d{4})', /\(\?<name>/],
  ['(?P<y>a)(?P=y)', /\(\?<name>|\\k<name>/],
  ['\\Ayoga', /write \^/], ['yoga\\z', /write \$/], ['[[:alpha:]]+', /\[a-zA-Z\]/], ['(?>a+)b', /\(\?:/],
  ['a(?#note)b', /remove/], ['\\012', /\\x\{hh\}/],
  ['[]a]', /\\\]/], ['\\h+', /\[ \\t\]/], ['\\p{L}+', /class/], ['\\Qa.b\\E', /escape/],
  ['(?^)a', /\$options/], ['(?^:a)', /\$options/], ["(?'n'a)", /\(\?<name>/], ['(?C)a', /callouts/],
  ['(?C1)a', /callouts/], ['(?*a)', /\(\?=/], ['(?<*a)b', /\(\?<=/]
]

/** MongoDB refuses a NUL itself, before PCRE2 (code 2, "Regular expression cannot contain an embedded null byte"). */
export const MONGODB_REFUSES = ['a\0b', '\0', '[\0]']

/** Patterns that must stay accepted: what real clients write, and PCRE2 forms we translate. */
export const MUST_ACCEPT = [
  'festival', '^Yoga', 'yoga$', 'a.*b', '\\s+$', '^[a-z]+$', 'fest(ival)?', '\\d{4}-\\d{2}-\\d{2}', '^(foo|bar)baz',
  'yoga|pilates|dance',
  '[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}', '^\\w+$', '(?:abc)+', 'a+b+c+', '^[^@]+@[^@]+$', 'x(a|b)*y', '^.*$',
  'name \\d+', '.*workshop',
  '^(\\d+,)*\\d+$', '(\\d{1,3}\\.){3}\\d{1,3}', '(?:Mon|Mar)+', '\\bjazz\\b', '\\x{263A}', '\\x41', '\\t', 'caf\\xe9',
  'é+', '😀', '^\\$\\d+\\.\\d\\d$',
  '(?<year>\\d{4})-\\k<year>', '(a)\\1', '(?=a)a', '(?!b)a', '(?<=ab|c)d', '(?<!x)y', '[\\]]', '[\\-]', '[-a]', '[a-]',
  '\\.', '\\/', '\\-', 'a{,3}', 'a{', 'x{2,}',
  'colou?r', 'https?://', '-?\\d+(\\.\\d+)?', '^\\+?\\d{1,3}?[- ]?\\d{3}[- ]?\\d{4}$', '\\d?\\d?\\d?', 'a?b?c?d?e?',
  '[\\s\\S]', '[^\\s]', '\\v', '[\\v]', '\\cA', '\\0', '\\n\\r\\f', '(?:a|b|c)', 'a??', 'a*?b', 'a{2,3}?', '^$', '\\B',
  '[\\b]',
  '[a-c-\\d]', '[a-c-\\w]x', '(\\s|\\x{a0})+$', '^(?:[\\s]|\\x{2003})+$', '(?<=(😀|a))b', '(?<=😀{2})b',
  ...ASTRAL_CLASSES
]

/**
 * Ambiguous only with `i`, through PCRE2's case-equivalents in UTF mode (Unicode simple case folding)
 * that JavaScript's `i` without the u flag does not know: the Kelvin sign with k, ſ with s, ẞ with ß,
 * the Ohm sign with ω, the Angstrom sign with å, Deseret 𐐀 with 𐐨, alone or in a range
 * (each written as the character).
 */
export const UNSAFE_ONLY_CASELESS = [
  '(\u212a|k)+$', '(\u017f|s)+$', '(ß|\u1e9e)+$', '(\u2126|ω)+$', '(\u212b|å)+$', '(\\x{212A}|k)+$',
  '([k]|\u212a)+$', '(\u017f|[a-z])+$', '([\u017f]|[a-z])+$', '(\\W|s)+$', '^(?:\\W|k)+$', '(\u{10400}|\u{10428})+$',
  '([\u{10400}-\u{10410}]|\u{10428})+$'
]

/** Safe with `i` as PCRE2 reads it: what its case-equivalents keep apart stays apart. */
export const SAFE_CASELESS = [
  '^(?:k|x)+$', '[a-z]+', 'yoga', 'Straße', 'kiosk|ski', '\\bΩmega\\b', '^[^k]+\\x{212A}+$', '^(?:\\W|x)+$',
  '(\u{10400}|x)+$', '([\u{10400}-\u{10410}]|x)+$'
]

const ATOMS = ['a', 'b', 'ab', '.', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S', '[ab]', '[^a]', '[a-c]', '[\\d_]',
  '\\x41', '\\x{263A}', '\\n', '\\r', '\\v', 'é', '\\.', ' ',
  '^', '$', '\\b', '\\B', '(?=a)', '(?!b)', '(?<=a)', '(?<!ab)', '\\u0041', '[]', '\\z', '\\A', '\\h', '(?i)', '(?#c)',
  '\\p{L}', '[[:alpha:]]', '\\1', '\\k<n>', '(?<n>a)', '\\Q.\\E', '\\x{ffffff}', '\\e', '\\a']
const QUANTIFIERS = ['', '', '', '*', '+', '?', '{2}', '{1,3}', '{2,}', '*?', '+?', '{65536}', '++', '{,2}']

function item (random: SeededRandom, depth: number): string {
  if (depth < 2 && random.chance(0.3)) {
    const alternatives = Array.from({ length: random.int(1, 3) }, () => sequence(random, depth + 1)).join('|')
    const open = random.pick(['(', '(?:', '(?<g>', '(?=', '(?<='])
    return `${open}${alternatives})${random.pick(QUANTIFIERS)}`
  }
  return random.pick(ATOMS) + random.pick(QUANTIFIERS)
}

function sequence (random: SeededRandom, depth: number): string {
  return Array.from({ length: random.int(1, 4) }, () => item(random, depth)).join('')
}

/** `count` patterns drawn from the atoms and quantifiers above, the same on every run. */
export function generatedPatterns (count: number, seed = 9): string[] {
  const random = new SeededRandom(seed)
  return Array.from({ length: count }, () => sequence(random, 0))
}

export const FLAG_SETS = ['', 'i', 'm', 's', 'x', 'imsx']
