// Reads the raw query string itself: a generic parser would silently merge repeated
// parameters or decide on its own what `filter[a][$in]` or `filter[__proto__]` means.
import { Problems } from './problems.js'

export interface RawListParams {
  filter?: string
  /**
   * `filter[…]` entries in order, with the texts between their brackets (`filter[$or][0][name]`: `$or`, `0`,
   * `name`).
   */
  brackets: Array<{ key: string, segments: string[], value: string }>
  sort?: string
  limit?: string
  skip?: string
  count?: string
  fields?: string
  after?: string
  since?: string
  wait?: string
  by?: string
}

type ScalarName = Exclude<keyof RawListParams, 'brackets'>

/** The parameters of a list. */
export const LIST_PARAMS: readonly ScalarName[] = ['filter', 'sort', 'limit', 'skip', 'count', 'fields', 'after']
/** The parameters of a change feed. */
export const FEED_PARAMS: readonly ScalarName[] = ['filter', 'fields', 'since', 'limit', 'wait']
/** The parameters of a list's counts per group. */
export const COUNTS_PARAMS: readonly ScalarName[] = ['by', 'filter', 'limit']
const BRACKET_KEY = /^filter(?:\[[^[\]]+\])+$/
const INVALID_CODE = {
  filter: 'INVALID_JSON',
  sort: 'INVALID_SORT',
  limit: 'INVALID_LIMIT',
  skip: 'INVALID_SKIP',
  count: 'INVALID_COUNT',
  fields: 'INVALID_FIELDS',
  after: 'INVALID_CURSOR',
  since: 'INVALID_CURSOR',
  wait: 'INVALID_VALUE',
  by: 'INVALID_GROUP'
} as const

/** Form decoding: `+` is a space, then percent-escapes; undefined when an escape is broken. */
function decode (text: string): string | undefined {
  const plus = text.includes('+')
  const spaced = plus ? text.replaceAll('+', ' ') : text
  if (!text.includes('%')) return spaced
  try {
    return decodeURIComponent(spaced)
  } catch {
    return undefined
  }
}

const named = new Map<readonly ScalarName[], { names: Set<string>, words: string }>()

/** Reads a query string whose scalar parameters are `names` (a list's by default). */
export function readQueryString (
  raw: string, problems: Problems, names: readonly ScalarName[] = LIST_PARAMS
): RawListParams {
  let known = named.get(names)
  if (known === undefined) {
    known = {
      names: new Set(names), words: `${names.slice(0, -1).join(', ')} and ${names[names.length - 1] as string}`
    }
    named.set(names, known)
  }
  const SCALAR_PARAMS = known.names
  const params: RawListParams = { brackets: [] }
  /** Names other than the five scalars; scalars are checked on `params` itself. */
  let seenOthers: Set<string> | undefined
  for (let start = 0; start < raw.length;) {
    let end = raw.indexOf('&', start)
    if (end < 0) end = raw.length
    const equals = raw.indexOf('=', start)
    const hasValue = equals >= 0 && equals < end
    const rawKey = raw.slice(start, hasValue ? equals : end)
    const rawValue = hasValue ? raw.slice(equals + 1, end) : ''
    start = end + 1
    if (rawKey.length === 0 && !hasValue) continue
    const key = decode(rawKey)
    if (key === undefined) {
      problems.add(rawKey, '', 'UNKNOWN_PARAMETER', `The parameter name '${rawKey}' is not valid percent-encoding`)
      continue
    }
    const scalar = SCALAR_PARAMS.has(key)
    seenOthers ??= scalar ? undefined : new Set()
    if (scalar ? params[key as keyof typeof INVALID_CODE] !== undefined : seenOthers?.has(key) === true) {
      problems.add(key, '', 'DUPLICATE_PARAMETER', `'${key}' is given more than once; give each parameter once`)
      continue
    }
    seenOthers?.add(key)
    const value = decode(rawValue)
    if (scalar) {
      const name = key as keyof typeof INVALID_CODE
      if (value === undefined) {
        problems.add(name, '', INVALID_CODE[name], `The value of '${name}' is not valid percent-encoding`)
      } else {
        params[name] = value
      }
      continue
    }
    if (!BRACKET_KEY.test(key)) {
      problems.add(key, '', 'UNKNOWN_PARAMETER', `Unknown parameter '${key}'; the parameters are ${known.words}`)
    } else if (value === undefined) {
      problems.add('filter', '', 'INVALID_VALUE', `The value of '${key}' is not valid percent-encoding`)
    } else {
      params.brackets.push({ key, segments: key.slice(7, -1).split(']['), value })
    }
  }
  return params
}
