// Micro-benchmark: compiling a list query string, side by side with api-query-params doing the
// same job (query string → MongoDB find arguments). Rounds alternate A, B, A, B… so that noise
// from the rest of the machine hits both; the figure is the median time per call over the rounds.
import aqp from 'api-query-params'
import { ObjectId } from 'mongodb'
import { compileListQuery } from '../list-query/compile-list-query.js'
import { buildQuerySpec } from '../list-query/query-spec.js'
import { Activity, Registration, Session } from '../schemas/kinds.js'
import { checkPatternUncached } from '../mongodb-regex/check-pattern.js'
import { printTable, type Table } from './report.js'
import { median, timePerCall } from './timing.js'

const limits = { defaultLimit: 100, maxLimit: 1000, maxSkip: 100_000 }
const json = (filter: unknown) => `filter=${encodeURIComponent(JSON.stringify(filter))}`
const ids = Array.from({ length: 50 }, (_, i) => new ObjectId(i.toString(16).padStart(24, 'a')).toHexString())

export const INPUTS = [
  {
    name: '(a) boolean + regex, sort, limit, skip',
    spec: buildQuerySpec(Activity, { scopeField: 'project' }),
    query: `${json({ active: true, name: { $regex: 'yoga', $options: 'i' } })}&sort=%2Bname,-createdAt&limit=10&skip=20`
  },
  {
    name: '(b) date range on start/end',
    spec: buildQuerySpec(Session, { scopeField: 'project' }),
    query: `${json({ start: { $gte: '2024-06-01' }, end: { $lt: '2024-07-01' } })}&sort=%2Bstart&limit=20`
  },
  {
    name: '(c) $in with 50 ObjectIds',
    spec: buildQuerySpec(Registration, { scopeField: 'project' }),
    query: json({ 'sessionsSubscriptions.session': { $in: ids } })
  },
  {
    name: '(d) two regexes, one with options',
    spec: buildQuerySpec(Activity, { scopeField: 'project' }),
    query: `${json({ name: { $regex: '^(fest|work)shop\\s+\\d{4}$', $options: 'i' }, tags: { $regex: '^jazz' } })}` +
      '&sort=-createdAt'
  },
  {
    name: '(e) $or: name or email contains a word',
    spec: buildQuerySpec(Registration, { scopeField: 'project' }),
    query: `${json({
      $or: [{ name: { $regex: 'dupont', $options: 'i' } }, { email: { $regex: 'dupont', $options: 'i' } }]
    })}&sort=-createdAt`
  }
]

/** The regex check before its verdict is cached: what a client's first use of a pattern costs. */
export function benchFirstRegexCheck (calls = 200): Array<{ pattern: string, options: string, us: number }> {
  const patterns: Array<[string, string]> = [
    ['yoga', 'i'],
    ['^(fest|work)shop\\s+\\d{4}$', 'i'],
    ['^jazz', ''],
    ['[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}', '']
  ]
  return patterns.map(([pattern, options]) => {
    const us = median(Array.from({ length: 5 }, (_, round) =>
      timePerCall((i: number) => checkPatternUncached(`${pattern}(?:${round}x${i})?`, options), calls))) / 1000
    return { pattern, options, us }
  })
}

export interface CompileFigure {
  input: string
  listingNs: number
  aqpNs: number
  ratio: number
  ratioMin: number
  ratioMax: number
}

export function benchCompile ({ rounds = 15, calls = 4000 } = {}): CompileFigure[] {
  return INPUTS.map(({ name, spec, query }) => {
    const ours = () => {
      const result = compileListQuery(query, spec, limits)
      if (!result.ok) throw new Error(`${name} does not compile: ${JSON.stringify(result.problems)}`)
      return result
    }
    const theirs = () => aqp(query)
    timePerCall(ours, calls)
    timePerCall(theirs, calls)
    const a: number[] = []
    const b: number[] = []
    for (let round = 0; round < rounds; round++) {
      a.push(timePerCall(ours, calls))
      b.push(timePerCall(theirs, calls))
    }
    const ratios = a.map((x, i) => x / (b[i] as number))
    return {
      input: name,
      listingNs: median(a),
      aqpNs: median(b),
      ratio: median(a) / median(b),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios)
    }
  })
}

export function compileTable (figures: CompileFigure[]): Table {
  return {
    title: 'Compile micro-benchmark (median ns per call; ratio = listing-api / api-query-params, target ≤ 0.5)',
    rows: figures.map((f) => ({
      input: f.input,
      'listing-api ns': Math.round(f.listingNs),
      'api-query-params ns': Math.round(f.aqpNs),
      ratio: f.ratio.toFixed(2),
      'ratio min–max': `${f.ratioMin.toFixed(2)}–${f.ratioMax.toFixed(2)}`
    }))
  }
}

export function firstRegexCheckTable (figures: ReturnType<typeof benchFirstRegexCheck>): Table {
  return {
    title: 'First check of a $regex (uncached; median µs per call; later calls hit the verdict cache)',
    rows: figures.map((f) => ({ pattern: f.pattern, options: f.options, µs: f.us.toFixed(1) }))
  }
}

if (/compile\.[jt]s$/.test(process.argv[1] ?? '')) {
  printTable(compileTable(benchCompile()))
  printTable(firstRegexCheckTable(benchFirstRegexCheck()))
}
