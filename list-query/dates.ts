/** A date-only or year-only value names a whole UTC period `[start, end)`; a timestamp an instant. */
export type DateValue =
  | { kind: 'instant', at: Date }
  | { kind: 'period', start: Date, end: Date }

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
const daysIn = (year: number, month: number): number =>
  month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1] as number

function utc (year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): Date {
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms))
  if (year < 100) date.setUTCFullYear(date.getUTCFullYear() - 1900) // Date.UTC maps years 0–99 to 1900–1999
  return date
}

/** The decimal number written by `count` digits at `start`, or -1. (Read by hand: this is on the hot path.) */
function digits (text: string, start: number, count: number): number {
  let n = 0
  for (let i = start; i < start + count; i++) {
    const c = text.charCodeAt(i) - 48
    if (c < 0 || c > 9) return -1
    n = n * 10 + c
  }
  return n
}

/** `YYYY-MM-DD` at the start of `text`: [year, month, day], or undefined when malformed or impossible. */
function readDay (text: string): [number, number, number] | undefined {
  const year = digits(text, 0, 4)
  const month = digits(text, 5, 2)
  const day = digits(text, 8, 2)
  if (year < 0 || text[4] !== '-' || text[7] !== '-' || month < 1 || month > 12 ||
    day < 1 || day > daysIn(year, month)) return undefined
  return [year, month, day]
}

/** Offset in minutes of `Z` or `±HH:MM` at `start`, the whole rest of the text; undefined otherwise. */
function readOffset (text: string, start: number): number | undefined {
  if (text.length === start + 1 && text[start] === 'Z') return 0
  const sign = text[start]
  if (text.length !== start + 6 || (sign !== '+' && sign !== '-') || text[start + 3] !== ':') return undefined
  const hours = digits(text, start + 1, 2)
  const minutes = digits(text, start + 4, 2)
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return undefined
  return (sign === '-' ? -1 : 1) * (hours * 60 + minutes)
}

/**
 * Parses the three accepted forms (docs/query-language.md): `YYYY`, `YYYY-MM-DD`, and
 * `YYYY-MM-DDTHH:MM:SS[.mmm]` with `Z` or `±HH:MM`. Anything else, or an impossible date, is undefined.
 */
export function parseDate (text: string): DateValue | undefined {
  if (text.length === 4) {
    const year = digits(text, 0, 4)
    return year < 0 ? undefined : { kind: 'period', start: utc(year, 1, 1), end: utc(year + 1, 1, 1) }
  }
  const day = readDay(text)
  if (day === undefined) return undefined
  const [year, month, date] = day
  if (text.length === 10) {
    const start = utc(year, month, date)
    return { kind: 'period', start, end: new Date(start.getTime() + 86_400_000) }
  }
  if (text.length < 20 || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':') return undefined
  const hour = digits(text, 11, 2)
  const minute = digits(text, 14, 2)
  const second = digits(text, 17, 2)
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined
  let ms = 0
  let rest = 19
  if (text[19] === '.') {
    ms = digits(text, 20, 3)
    if (ms < 0) return undefined
    rest = 23
  }
  const offset = readOffset(text, rest)
  if (offset === undefined) return undefined
  return { kind: 'instant', at: utc(year, month, date, hour, minute - offset, second, ms) }
}
