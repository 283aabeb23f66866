// How much a request's Accept header wants a media type (RFC 9110 §12.5.1): the q of the most
// specific range that matches it. Media types are case-insensitive; their parameters are not weighed.

export interface Weight {
  /** 0 when no range matches, or the one that does says q=0 ("not acceptable"). */
  q: number
  /**
   * Of the range that gave `q`: 0 for every type's, 1 for `application/*` and its like, 2 for the
   * type's own; -1 when none matches.
   */
  specificity: number
}

const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/** The parts of `text` between `separator`s outside quoted strings (a parameter's value may hold one). */
function split (text: string, separator: string): string[] {
  const parts: string[] = []
  let start = 0
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quoted) {
      if (char === '\\') i++
      else if (char === '"') quoted = false
    } else if (char === '"') {
      quoted = true
    } else if (char === separator) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts
}

/** `mediaType`'s weight in `accept`; no header accepts every type alike. A malformed range counts for nothing. */
export function weightOf (accept: string | undefined, mediaType: string): Weight {
  if (accept === undefined) return { q: 1, specificity: 0 }
  const [type, subtype] = mediaType.toLowerCase().split('/')
  let best: Weight = { q: 0, specificity: -1 }
  for (const range of split(accept, ',')) {
    const [name = '', ...parameters] = split(range, ';')
    const [rangeType, rangeSubtype, extra] = name.trim().toLowerCase().split('/')
    if (rangeSubtype === undefined || extra !== undefined) continue
    const specificity = rangeType === '*' && rangeSubtype === '*'
      ? 0
      : rangeType !== type ? -1 : rangeSubtype === '*' ? 1 : rangeSubtype === subtype ? 2 : -1
    if (specificity < best.specificity || specificity < 0) continue
    const weight = parameters.map((parameter) => parameter.split('='))
      .find(([key]) => key?.trim().toLowerCase() === 'q')
    const value = weight === undefined ? '1' : (weight[1] ?? '').trim()
    if (!QVALUE.test(value)) continue
    // Among ranges as specific as each other (`a/b;q=0.2, a/b`), the highest q.
    if (specificity > best.specificity || Number(value) > best.q) best = { q: Number(value), specificity }
  }
  return best
}
