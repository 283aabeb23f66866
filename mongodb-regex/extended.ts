/** What PCRE2's `x` option skips outside classes: Unicode Pattern_White_Space (UTF mode). */
const PATTERN_WHITE_SPACE = /[\t\n\v\f\r \u0085\u200e\u200f\u2028\u2029]/

/**
 * The `x` (extended) option: white space outside classes is ignored and `#` starts a comment
 * that runs to the next newline (pcre2pattern, "PCRE2_EXTENDED"). JavaScript has no such flag.
 */
export function stripExtended (pattern: string): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '')
      i++
    } else if (inClass) {
      if (c === ']') inClass = false
      out += c
    } else if (c === '[') {
      inClass = true
      out += c
      // A ']' right after '[' or '[^' is a literal member in PCRE2, not the end of the class.
      if (pattern[i + 1] === '^') out += pattern[++i]
      if (pattern[i + 1] === ']') out += pattern[++i]
    } else if (c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++
    } else if (!PATTERN_WHITE_SPACE.test(c)) {
      out += c
    }
  }
  return out
}
