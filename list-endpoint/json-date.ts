// Dates as Date#toISOString writes them, straight into the output and without a Date for
// years 0–9999 (the JSON writer's most frequent value after strings and ObjectIds).
import { MAX_DATE_MS, int32At } from './bson-elements.js'
import { DIGIT, QUOTE, type Out } from './json-out.js'

const DAY_MS = 86_400_000
// 0000-01-01 and 10000-01-01 in ms since the epoch: the years Date#toISOString writes with 4 digits.
const YEAR_0 = -62_167_219_200_000
const YEAR_10000 = 253_402_300_800_000

/** Two ASCII digits for each of 0…99. */
const PAIRS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1')

/** The two digits of `n` (0…99) at `at`. */
function putPair (o: Uint8Array, at: number, n: number): void {
  o[at] = PAIRS[n * 2] as number
  o[at + 1] = PAIRS[n * 2 + 1] as number
}

// `YYYY-MM-DD` of recently written days, by day number modulo DAYS_KEPT: the dates of a page
// mostly fall on few days, near each other.
const DAYS_KEPT = 1024
const keptDays = new Float64Array(DAYS_KEPT).fill(Number.NaN)
const keptDayText = new Uint8Array(DAYS_KEPT * 10)

/** `YYYY-MM-DD` of a day since the epoch (civil-from-days, H. Hinnant's algorithm), years 0–9999. */
function writeDay (days: number, o: Uint8Array, at: number): void {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0)
  const century = Math.floor(year / 100)
  putPair(o, at, century)
  putPair(o, at + 2, year - century * 100)
  o[at + 4] = 0x2d
  putPair(o, at + 5, month)
  o[at + 7] = 0x2d
  putPair(o, at + 8, day)
}

/**
 * `"YYYY-MM-DDTHH:MM:SS.mmmZ"` straight into the output, Date#toISOString's text (computed
 * without a Date for years 0–9999); false for a date the decoder makes invalid.
 */
export function putDate (out: Out, buf: Buffer, at: number): boolean {
  const ms = int32At(buf, at + 4) * 4294967296 + (int32At(buf, at) >>> 0)
  if (!(ms >= -MAX_DATE_MS && ms <= MAX_DATE_MS)) return false
  if (ms < YEAR_0 || ms >= YEAR_10000) {
    out.ascii(`"${new Date(ms).toISOString()}"`)
    return true
  }
  const days = Math.floor(ms / DAY_MS)
  const slot = days & (DAYS_KEPT - 1)
  if (keptDays[slot] !== days) {
    writeDay(days, keptDayText, slot * 10)
    keptDays[slot] = days
  }
  // Milliseconds into the day: below 2^31, so int32 arithmetic once marked as such (`| 0`);
  // left a double, every division below is a floating-point one (docs/performance.md).
  const rest = (ms - days * DAY_MS) | 0
  const hours = (rest / 3_600_000) | 0
  const afterHours = rest - hours * 3_600_000
  const minutes = (afterHours / 60_000) | 0
  const secondsMs = afterHours - minutes * 60_000
  const seconds = (secondsMs / 1000) | 0
  const millis = secondsMs - seconds * 1000
  const centis = (millis / 100) | 0
  out.room(26)
  const o = out.buf
  const p = out.pos
  o[p] = QUOTE
  for (let i = 0; i < 10; i++) o[p + 1 + i] = keptDayText[slot * 10 + i] as number
  o[p + 11] = 0x54
  putPair(o, p + 12, hours)
  o[p + 14] = 0x3a
  putPair(o, p + 15, minutes)
  o[p + 17] = 0x3a
  putPair(o, p + 18, seconds)
  o[p + 20] = 0x2e
  o[p + 21] = DIGIT + centis
  putPair(o, p + 22, millis - centis * 100)
  o[p + 24] = 0x5a
  o[p + 25] = QUOTE
  out.pos = p + 26
  return true
}
