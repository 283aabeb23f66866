import type { Document } from 'mongodb'
import { bracketTree } from './bracket-filter.js'
import { compileFields } from './compile-fields.js'
import { compileFilter } from './compile-filter.js'
import { compileSort, type SortSpec } from './compile-sort.js'
import { readJson } from './json-text.js'
import { Problems, type ProblemItem } from './problems.js'
import type { QuerySpec } from './query-spec.js'
import { resolveGroup, type GroupBy } from './group-by.js'
import { COUNTS_PARAMS, FEED_PARAMS, readQueryString, type RawListParams } from './query-string.js'

export const MAX_FILTER_LENGTH = 10_000

export interface ListLimits {
  defaultLimit: number
  maxLimit: number
  maxSkip: number
}

/** The paging bounds the compiler enforces, from the service's configuration (DEFAULT_LIMIT, MAX_LIMIT, MAX_SKIP). */
export function listLimits (config: { DEFAULT_LIMIT: number, MAX_LIMIT: number, MAX_SKIP: number }): ListLimits {
  return { defaultLimit: config.DEFAULT_LIMIT, maxLimit: config.MAX_LIMIT, maxSkip: config.MAX_SKIP }
}

/** A list request, ready for the driver: `find(filter).sort(sort).skip(skip).limit(limit)`. */
export interface ListQuery {
  filter: Document
  sort: SortSpec
  skip: number
  /** 0: a count-only page (no document is read). */
  limit: number
  count: boolean
  /** The fields asked for (`_id` is always returned); undefined: every declared field. */
  fields?: string[]
  /** The cursor text of `after`, checked against its signature and query by the route (list-endpoint/cursor.ts). */
  after?: string
}

export type CompileResult = { ok: true, query: ListQuery } | { ok: false, problems: ProblemItem[] }

// Leading zeros are still the number they pad; 16 digits stay within Number's exact integers.
const DECIMAL = /^0*\d{1,16}$/

function integer (text: string | undefined, fallback: number, min: number, max: number): number | undefined {
  if (text === undefined) return fallback
  if (!DECIMAL.test(text)) return undefined
  const n = Number(text)
  return n >= min && n <= max ? n : undefined
}

/** The filter of `filter=<JSON>` or of `filter[…]` brackets; undefined when it has problems. */
function compileFilterParam (params: RawListParams, spec: QuerySpec, problems: Problems): Document | undefined {
  let filter: Document | undefined = {}
  if (params.filter !== undefined && params.brackets.length > 0) {
    problems.add(
      'filter', '', 'MIXED_FILTER_NOTATION', 'Use either filter=<JSON> or filter[field]=… brackets, not both'
    )
  } else if (params.filter !== undefined) {
    if (params.filter.length > MAX_FILTER_LENGTH) {
      problems.add(
        'filter', '', 'FILTER_TOO_LARGE', `filter is ${params.filter.length} characters; at most ${MAX_FILTER_LENGTH}`
      )
    } else {
      const tree = readJson(params.filter, problems)
      filter = tree === undefined ? undefined : compileFilter(tree, spec, problems)
    }
  } else if (params.brackets.length > 0) {
    const length = params.brackets.reduce(
      (sum, b) => b.segments.reduce((n, segment) => n + segment.length, sum) + b.value.length, 0
    )
    if (length > MAX_FILTER_LENGTH) {
      problems.add(
        'filter', '', 'FILTER_TOO_LARGE', `The filter brackets hold ${length} characters; at most ${MAX_FILTER_LENGTH}`
      )
    } else {
      filter = compileFilter(bracketTree(params.brackets, problems), spec, problems)
    }
  }

  return filter
}

/** From the raw query string to a driver-ready query, or every problem found in it. */
export function compileListQuery (rawQuery: string, spec: QuerySpec, limits: ListLimits): CompileResult {
  const problems = new Problems()
  const params = readQueryString(rawQuery, problems)

  const filter = compileFilterParam(params, spec, problems)

  const sort = compileSort(params.sort, spec, problems)
  const limit = integer(params.limit, limits.defaultLimit, 0, limits.maxLimit)
  if (limit === undefined) {
    problems.add('limit', '', 'INVALID_LIMIT', `limit must be a whole number from 0 (count only) to ${limits.maxLimit}`)
  }
  const skip = integer(params.skip, 0, 0, limits.maxSkip)
  if (skip === undefined) {
    problems.add('skip', '', 'INVALID_SKIP', `skip must be a whole number from 0 to ${limits.maxSkip}`)
  }
  const count = params.count === undefined
    ? false
    : params.count === 'true' ? true : params.count === 'false' ? false : undefined
  if (count === undefined) problems.add('count', '', 'INVALID_COUNT', 'count must be true or false')
  const fields = compileFields(params.fields, spec, problems)
  if (params.after !== undefined && params.skip !== undefined) {
    problems.add('after', '', 'INVALID_CURSOR', 'after continues from a cursor: it cannot be combined with skip')
  } else if (params.after === '') {
    problems.add('after', '', 'INVALID_CURSOR', 'after is empty: pass the next cursor of the previous page')
  }

  if (!problems.empty || filter === undefined || limit === undefined || skip === undefined || count === undefined) {
    return { ok: false, problems: problems.items }
  }
  const query: ListQuery = { filter, sort, skip, limit, count }
  if (fields !== undefined) query.fields = fields
  if (params.after !== undefined) query.after = params.after
  return { ok: true, query }
}

/** A change feed's request (docs/changes.md): the list's filter and fields, and the feed's own parameters. */
export interface FeedQuery {
  filter: Document
  fields?: string[]
  /** The token of `next`, checked by the feed (changes/feed-token.ts). */
  since?: string
  /** Events per answer. */
  limit: number
  /** Seconds to wait when no event is ready. */
  wait: number
}

export const FEED_MAX_LIMIT = 1000
export const FEED_DEFAULT_LIMIT = 100
export const FEED_MAX_WAIT = 60

export type FeedCompileResult = { ok: true, query: FeedQuery } | { ok: false, problems: ProblemItem[] }

/** A change feed's query string, with the list's rules for `filter` and `fields`. */
export function compileFeedQuery (rawQuery: string, spec: QuerySpec): FeedCompileResult {
  const problems = new Problems()
  const params = readQueryString(rawQuery, problems, FEED_PARAMS)
  const filter = compileFilterParam(params, spec, problems)
  const fields = compileFields(params.fields, spec, problems)
  const limit = integer(params.limit, FEED_DEFAULT_LIMIT, 1, FEED_MAX_LIMIT)
  if (limit === undefined) {
    problems.add(
      'limit', '', 'INVALID_LIMIT',
      `limit is the number of events per answer: a whole number from 1 to ${FEED_MAX_LIMIT}`
    )
  }
  const wait = integer(params.wait, 0, 0, FEED_MAX_WAIT)
  if (wait === undefined) {
    problems.add(
      'wait', '', 'INVALID_VALUE',
      `wait is how many seconds to wait for a change: a whole number from 0 to ${FEED_MAX_WAIT}`
    )
  }
  if (params.since === '') {
    problems.add(
      'since', '', 'INVALID_CURSOR',
      'since is empty: pass the next token of the previous answer, or leave since out to start with the whole list'
    )
  }
  if (!problems.empty || filter === undefined || limit === undefined || wait === undefined) {
    return { ok: false, problems: problems.items }
  }
  const query: FeedQuery = { filter, limit, wait }
  if (fields !== undefined) query.fields = fields
  if (params.since !== undefined) query.since = params.since
  return { ok: true, query }
}

/** A list's counts per group (docs/counts.md): the list's filter, the group key, the number of groups. */
export interface CountsQuery {
  filter: Document
  by: GroupBy
  limit: number
}

export const COUNTS_MAX_LIMIT = 1000
export const COUNTS_DEFAULT_LIMIT = 100

export type CountsCompileResult = { ok: true, query: CountsQuery } | { ok: false, problems: ProblemItem[] }

/** The query string of `<list>/counts`, with the list's rules for `filter`. */
export function compileCountsQuery (rawQuery: string, spec: QuerySpec): CountsCompileResult {
  const problems = new Problems()
  const params = readQueryString(rawQuery, problems, COUNTS_PARAMS)
  const filter = compileFilterParam(params, spec, problems)
  const limit = integer(params.limit, COUNTS_DEFAULT_LIMIT, 1, COUNTS_MAX_LIMIT)
  if (limit === undefined) {
    problems.add(
      'limit', '', 'INVALID_LIMIT', `limit is the number of groups: a whole number from 1 to ${COUNTS_MAX_LIMIT}`
    )
  }
  const by = params.by === undefined
    ? { problem: 'by is required: the path whose values make the groups' }
    : resolveGroup(spec, params.by)
  if ('problem' in by) problems.add('by', '', 'INVALID_GROUP', by.problem)
  if (!problems.empty || filter === undefined || limit === undefined || 'problem' in by) {
    return { ok: false, problems: problems.items }
  }
  return { ok: true, query: { filter, by, limit } }
}
