import type { Document } from 'mongodb'
import { bracketTree } from './bracket-filter.js'
import { compileFilter } from './compile-filter.js'
import { compileSort, type SortSpec } from './compile-sort.js'
import { readJson } from './json-text.js'
import { Problems, type ProblemItem } from './problems.js'
import type { QuerySpec } from './query-spec.js'
import { readQueryString } from './query-string.js'

export const MAX_FILTER_LENGTH = 10_000

export interface ListLimits {
  defaultLimit: number
  maxLimit: number
  maxSkip: number
}

/** A list request, ready for the driver: `find(filter).sort(sort).skip(skip).limit(limit)`. */
export interface ListQuery {
  filter: Document
  sort: SortSpec
  skip: number
  limit: number
  count: boolean
}

export type CompileResult = { ok: true, query: ListQuery } | { ok: false, problems: ProblemItem[] }

const DECIMAL = /^\d{1,16}$/

function integer (text: string | undefined, fallback: number, min: number, max: number): number | undefined {
  if (text === undefined) return fallback
  if (!DECIMAL.test(text)) return undefined
  const n = Number(text)
  return n >= min && n <= max ? n : undefined
}

/** From the raw query string to a driver-ready query, or every problem found in it. */
export function compileListQuery (rawQuery: string, spec: QuerySpec, limits: ListLimits): CompileResult {
  const problems = new Problems()
  const params = readQueryString(rawQuery, problems)

  let filter: Document | undefined = {}
  if (params.filter !== undefined && params.brackets.length > 0) {
    problems.add('filter', '', 'MIXED_FILTER_NOTATION', 'Use either filter=<JSON> or filter[field]=… brackets, not both')
  } else if (params.filter !== undefined) {
    if (params.filter.length > MAX_FILTER_LENGTH) {
      problems.add('filter', '', 'FILTER_TOO_LARGE', `filter is ${params.filter.length} characters; at most ${MAX_FILTER_LENGTH}`)
    } else {
      const tree = readJson(params.filter, problems)
      filter = tree === undefined ? undefined : compileFilter(tree, spec, problems)
    }
  } else if (params.brackets.length > 0) {
    const length = params.brackets.reduce((sum, b) => sum + b.field.length + (b.operator?.length ?? 0) + b.value.length, 0)
    if (length > MAX_FILTER_LENGTH) {
      problems.add('filter', '', 'FILTER_TOO_LARGE', `The filter brackets hold ${length} characters; at most ${MAX_FILTER_LENGTH}`)
    } else {
      filter = compileFilter(bracketTree(params.brackets, problems), spec, problems)
    }
  }

  const sort = compileSort(params.sort, spec, problems)
  const limit = integer(params.limit, limits.defaultLimit, 1, limits.maxLimit)
  if (limit === undefined) problems.add('limit', '', 'INVALID_LIMIT', `limit must be a whole number from 1 to ${limits.maxLimit}`)
  const skip = integer(params.skip, 0, 0, limits.maxSkip)
  if (skip === undefined) problems.add('skip', '', 'INVALID_SKIP', `skip must be a whole number from 0 to ${limits.maxSkip}`)
  const count = params.count === undefined ? false : params.count === 'true' ? true : params.count === 'false' ? false : undefined
  if (count === undefined) problems.add('count', '', 'INVALID_COUNT', 'count must be true or false')

  if (!problems.empty || filter === undefined || limit === undefined || skip === undefined || count === undefined) {
    return { ok: false, problems: problems.items }
  }
  return { ok: true, query: { filter, sort, skip, limit, count } }
}
