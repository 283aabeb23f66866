import { BSONRegExp } from 'bson'

/**
 * Turns a MongoDB (PCRE-style) pattern and options into a JavaScript RegExp.
 * `x` (extended) has no JavaScript flag: whitespace and `#` comments are removed here.
 */
export function toRegExp (pattern: string, options = ''): RegExp {
  let flags = ''
  for (const option of options) {
    if (option === 'x') pattern = stripExtended(pattern)
    else if ('ims'.includes(option)) flags += option
    else if (option !== 'u') throw new Error(`invalid flag in regex options: ${option}`)
  }
  return new RegExp(pattern, flags)
}

export function fromBSONRegExp (value: BSONRegExp): RegExp {
  return toRegExp(value.pattern, value.options)
}

function stripExtended (pattern: string): string {
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
    } else if (c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++
    } else if (!/\s/.test(c)) {
      out += c
    }
  }
  return out
}
