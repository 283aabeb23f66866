/** A date-only or year-only value names a whole UTC period `[start, end)`; a timestamp an instant. */
export type DateValue =
  | { kind: 'instant', at: Date }
  | { kind: 'period', start: Date, end: Date }

const YEAR = /^(\d{4})$/
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{3}))?(Z|([+-])(\d{2}):(\d{2}))$/

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

function utc (year: number, month: number, day: number): Date {
  const date = new Date(Date.UTC(2000, month - 1, day))
  date.setUTCFullYear(year) // Date.UTC maps years 0–99 to 1900–1999
  return date
}

/** Parses the three accepted forms (CONTRACT.md §4); anything else, or an impossible date, is undefined. */
export function parseDate (text: string): DateValue | undefined {
  let match = YEAR.exec(text)
  if (match !== null) {
    const year = Number(match[1])
    return { kind: 'period', start: utc(year, 1, 1), end: utc(year + 1, 1, 1) }
  }
  match = DAY.exec(text)
  if (match !== null) {
    const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
    if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined
    const start = utc(year, month, day)
    return { kind: 'period', start, end: new Date(start.getTime() + 86_400_000) }
  }
  match = TIMESTAMP.exec(text)
  if (match === null) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return undefined
  let offsetMinutes = 0
  if (match[8] !== 'Z') {
    const offsetHours = Number(match[10])
    const offsetMins = Number(match[11])
    if (offsetHours > 23 || offsetMins > 59) return undefined
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins)
  }
  const at = utc(year, month, day)
  at.setUTCHours(hour, minute - offsetMinutes, second, Number(match[7] ?? 0))
  return { kind: 'instant', at }
}
