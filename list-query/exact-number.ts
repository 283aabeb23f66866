const LIMIT = 2n ** 53n

/**
 * A JSON number's value, judged by its text (docs/query-language.md): a number outside ±2^53 is
 * refused even when it would round into range (`9007199254740993`, `9.007199254740993e15`,
 * `9007199254740992.5`).
 */
export function exactNumber (text: string): number | undefined {
  const value = Number(text)
  if (!Number.isFinite(value)) return undefined
  // Up to 15 significant digits without an exponent, every integer is exact and in range.
  if (text.length <= 15 && !text.includes('e') && !text.includes('E')) return value
  const match = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (match === null) return undefined
  const [, whole = '', fraction = '', exponentText = '0'] = match
  const digits = (whole + fraction).replace(/^0+/, '')
  if (digits === '') return value
  const significant = digits.replace(/0+$/, '')
  // The power of ten of the last significant digit: ≥ 0 means the text names an integer.
  const lastPower = Number(exponentText) - fraction.length + (digits.length - significant.length)
  if (lastPower < 0) {
    // Below 2^52 the double cannot have rounded down from beyond 2^53: no exact reading needed.
    if (Math.abs(value) < 2 ** 52) return value
    return BigInt(significant) <= LIMIT * 10n ** BigInt(-lastPower) ? value : undefined
  }
  if (significant.length + lastPower > 17) return undefined
  const magnitude = BigInt(significant) * 10n ** BigInt(lastPower)
  return magnitude <= LIMIT ? value : undefined
}
