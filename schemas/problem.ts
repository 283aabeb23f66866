import { STATUS_CODES } from 'node:http'
import { Type, type Static } from '@sinclair/typebox'

/**
 * Every error code the service answers with: its status(es) and what it means to the caller.
 * docs/errors.md is written from this list (`npm run docs`), each with a real answer.
 */
export const ERRORS = {
  INVALID_JSON: { status: [400], meaning: '`filter` is not valid JSON; the pointer is where reading stopped.' },
  DUPLICATE_KEY: {
    status: [400],
    meaning: 'A JSON object of `filter` names the same key twice (JSON.parse would silently keep the last).'
  },
  FILTER_NOT_OBJECT: { status: [400], meaning: '`filter` is JSON but not an object.' },
  FILTER_TOO_LARGE: { status: [400], meaning: '`filter` (JSON or brackets) is longer than the service reads.' },
  UNKNOWN_FIELD: {
    status: [400],
    meaning: 'A field the kind does not have (with the nearest name, when one is close), in `filter`; ' +
      'in `sort` it is `INVALID_SORT`, in `fields` `INVALID_FIELDS`.'
  },
  RELATED_PATH: {
    status: [400],
    meaning: 'A path into a related document (`activity.name`): related documents are referenced by id only.'
  },
  SCOPE_FIELD: { status: [400], meaning: 'The project field of a nested list: the path fixes it.' },
  BLOCKED_OPERATOR: {
    status: [400],
    meaning: 'An operator refused for safety (`$where`, `$near`, `$geoWithin`, `$geoIntersects`).'
  },
  UNKNOWN_OPERATOR: {
    status: [400],
    meaning: 'An operator the language does not have (`$nor`, `$not`, `$expr`, a typo).'
  },
  FILTER_TOO_COMPLEX: {
    status: [400],
    meaning: 'An `$or` or `$and` with more than 10 branches, nested more than 3 deep, or a filter with more than 50 ' +
      'field conditions in all.'
  },
  OPERATOR_NOT_ALLOWED: {
    status: [400],
    meaning: 'An operator the field\'s type does not take (`$regex` on a boolean).'
  },
  INVALID_VALUE: { status: [400], meaning: 'A value of the wrong type for its field or operator.' },
  INVALID_DATE: {
    status: [400],
    meaning: 'A date that is not `YYYY`, `YYYY-MM-DD` or an ISO 8601 time with a zone, or that does not exist.'
  },
  INVALID_OBJECT_ID: { status: [400], meaning: 'An id that is not 24 hexadecimal characters.' },
  REGEX_TOO_LONG: { status: [400], meaning: 'A `$regex` pattern over 500 characters.' },
  INVALID_REGEX: {
    status: [400],
    meaning: 'A pattern PCRE2 (MongoDB\'s engine) refuses, or one the service refuses by its own rule; the message ' +
      'says which and how to write it.'
  },
  UNSAFE_REGEX: {
    status: [400],
    meaning: 'A pattern that can take exponential time (nested or overlapping repetition).'
  },
  INVALID_REGEX_OPTIONS: {
    status: [400],
    meaning: '`$options` other than the flags `i`, `m`, `s` and `x`, each at most once, or without a `$regex`.'
  },
  ARRAY_TOO_LARGE: { status: [400], meaning: 'An `$in`, `$nin` or `$all` list of more than 100 values.' },
  MIXED_FILTER_NOTATION: { status: [400], meaning: '`filter=<JSON>` and `filter[…]` brackets in one request.' },
  INVALID_SORT: {
    status: [400],
    meaning: 'A sort key without a direction, naming no field or one that cannot be sorted, repeated, or too many.'
  },
  INVALID_LIMIT: { status: [400], meaning: '`limit` is not a whole number from 0 to MAX_LIMIT.' },
  INVALID_SKIP: { status: [400], meaning: '`skip` is not a whole number from 0 to MAX_SKIP.' },
  INVALID_COUNT: { status: [400], meaning: '`count` is not `true` or `false`.' },
  DUPLICATE_PARAMETER: { status: [400], meaning: 'A query parameter given twice.' },
  UNKNOWN_PARAMETER: { status: [400], meaning: 'A query parameter the list does not take.' },
  INVALID_PROJECT_ID: { status: [400], meaning: 'The project id in the path is not 24 hexadecimal characters.' },
  PROJECT_NOT_FOUND: {
    status: [404],
    meaning: 'No project has this id, or none the caller may read (the two are not told apart).'
  },
  NOT_FOUND: { status: [404], meaning: 'No such route.' },
  QUERY_TIMEOUT: {
    status: [503],
    meaning: 'The query took longer than QUERY_TIMEOUT_MS; retry after `Retry-After`, or narrow the filter.'
  },
  DATABASE_UNAVAILABLE: { status: [503], meaning: 'The database cannot be reached now; retry after `Retry-After`.' },
  INTERNAL_ERROR: {
    status: [500],
    meaning: 'Something the service did not foresee; the log has the cause under the requestId.'
  },
  INVALID_FIELDS: { status: [400], meaning: '`fields` names a field the kind does not have, or repeats one.' },
  INVALID_CURSOR: {
    status: [400],
    meaning: '`after` (or a feed\'s `since`) is not a cursor this service signed (altered, truncated, or signed with ' +
      'a retired key).'
  },
  CURSOR_MISMATCH: {
    status: [400],
    meaning: '`after` (or `since`) was issued for another list, filter, sort or fields than the request\'s.'
  },
  PRECONDITION_FAILED: {
    status: [412],
    meaning: '`If-Match` on a list or its counts names entity tags, where the service\'s are weak: the strong ' +
      'comparison `If-Match` asks for never passes them (RFC 9110, 13.1.1). `If-Match: *` passes.'
  },
  METHOD_NOT_ALLOWED: {
    status: [405],
    meaning: 'A method other than GET or HEAD on a path of the service (a list, a feed, counts, the index, ' +
      'the health checks, the API\'s documents).'
  },
  URI_TOO_LONG: { status: [414], meaning: 'A path segment over 100 characters.' },
  HEADERS_TOO_LARGE: { status: [431], meaning: 'The URL and headers exceed 16 KiB.' },
  BAD_REQUEST: {
    status: [400, 408, 413, 415, 417],
    meaning: 'A request the HTTP layer refuses: a GET with a body, broken percent-encoding, not HTTP, no `Host` ' +
      'or an invalid one, an expectation other than `100-continue`, too slow to arrive.'
  },
  UNAUTHENTICATED: {
    status: [401],
    meaning: 'With AUTH_MODE=jwt: no bearer token, or one refused (the reason is in `WWW-Authenticate` and the ' +
      'message).'
  },
  RATE_LIMITED: {
    status: [429],
    meaning: 'More list requests this minute than RATE_LIMIT_PER_MINUTE; retry after `Retry-After`.'
  },
  OVERLOADED: {
    status: [503],
    meaning: 'The replica is overloaded or shutting down; retry after `Retry-After` (another replica may answer).'
  },
  AUTH_UNAVAILABLE: {
    status: [503],
    meaning: 'The keys that verify tokens cannot be fetched now; retry after `Retry-After`.'
  },
  CHANGES_EXPIRED: {
    status: [410],
    meaning: 'A change feed\'s `since` is older than the history the database keeps (or the database was replaced): ' +
      'start again without `since` and replace the copy.'
  },
  CHANGES_UNAVAILABLE: {
    status: [503],
    meaning: 'The database cannot give change feeds (not a replica set or a sharded cluster, older than MongoDB 6.0, ' +
      'change streams not enabled or not granted to the service\'s user, or the collection does not record pre- and ' +
      'post-images); the detail names what is missing. Lists are unaffected.'
  },
  INVALID_GROUP: {
    status: [400],
    meaning: 'The `by` of a list\'s counts is missing or names no path its values can be grouped by; the message ' +
      'lists the paths that can.'
  }
} as const satisfies Record<string, { status: readonly number[], meaning: string }>

export type ErrorCodeName = keyof typeof ERRORS
export const ERROR_CODES = Object.keys(ERRORS) as ErrorCodeName[]

/**
 * One of the codes, as a string `enum` rather than a union of literals: the response serializer
 * writes an enum as the string it is, where a union made it compile a validator on a route's
 * first problem and try each code in turn on every one.
 */
export const ErrorCode = Type.Unsafe<ErrorCodeName>({ type: 'string', enum: ERROR_CODES })
export type ErrorCode = Static<typeof ErrorCode>

export const ProblemItem = Type.Object({
  param: Type.String({ description: 'The query or path parameter at fault' }),
  pointer: Type.String({
    description: 'JSON Pointer into the parameter (for filter, into its JSON object; for sort, /<index>)'
  }),
  code: ErrorCode,
  message: Type.String()
})
export type ProblemItem = Static<typeof ProblemItem>

/** RFC 9457 problem details, as every 4xx and 5xx answer carries them. */
export const Problem = Type.Object({
  type: Type.String({ examples: ['about:blank'] }),
  title: Type.String({ examples: ['Bad Request'] }),
  status: Type.Integer({ minimum: 400, maximum: 599 }),
  code: ErrorCode,
  detail: Type.String(),
  errors: Type.Array(ProblemItem, { maxItems: 20 }),
  requestId: Type.Optional(Type.String({
    description: 'The request id (X-Request-Id) to quote when reporting a problem'
  }))
}, { $id: 'Problem', title: 'Problem details (RFC 9457)' })
export type Problem = Static<typeof Problem>

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** docs/errors.md: every problem has an `errors` list; a lone problem lists itself. */
export function problem (
  status: number, code: ErrorCode, detail: string, errors: ProblemItem[] = [], param = 'request'
): Problem {
  const items = errors.length > 0 ? errors : [{ param, pointer: '', code, message: detail }]
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, code, detail, errors: items }
}

/** What the service answers for anything it did not foresee (the log keeps the cause). */
export const internalError = (): Problem =>
  problem(500, 'INTERNAL_ERROR', 'An unexpected error occurred; it has been logged.')

/**
 * A response entry for route schemas: the problem body under its own media type, with an
 * example that is what the service sends (built by the code that builds the answer, so that
 * Swagger UI shows the real thing), its requestId aside.
 */
export const problemResponse = (description: string, example: ProblemError | Problem) => ({
  description,
  content: {
    [PROBLEM_CONTENT_TYPE]: {
      schema: Type.Ref('Problem'),
      example: {
        ...(example instanceof ProblemError ? example.body() : example),
        requestId: '7f3c2a9e-4b1d-4c8e-9a51-2d6f0b8e1c47'
      }
    }
  }
})

const MAX_ERRORS = 20

/** An error the client can act on; the error handler answers it as problem+json. */
export class ProblemError extends Error {
  readonly errors: ProblemItem[]

  constructor (
    readonly status: number, readonly code: ErrorCode, detail: string, errors: ProblemItem[] = [],
    readonly headers: Record<string, string> = {}
  ) {
    super(detail)
    this.name = 'ProblemError'
    this.errors = errors.slice(0, MAX_ERRORS)
  }

  /** The parameter a problem with one cause is about: its lone `errors` item names it. */
  param = 'request'

  /** Whether the error handler logs it; a route that logs its own state changes (/ready) says no. */
  logged = true

  /** A problem with one cause, about one parameter, header or part of the path. */
  static about (
    param: string, status: number, code: ErrorCode, detail: string, headers: Record<string, string> = {}
  ): ProblemError {
    const error = new ProblemError(status, code, detail, [], headers)
    error.param = param
    return error
  }

  /** The answer's body (without its requestId). */
  body (): Problem { return problem(this.status, this.code, this.message, this.errors, this.param) }

  /** A 400 listing every problem found; `code`/`detail` repeat the first. */
  static badRequest (errors: ProblemItem[]): ProblemError {
    const first = errors[0] as ProblemItem
    return new ProblemError(400, first.code, first.message, errors)
  }
}

/** The 503 of a request that a replica shutting down refuses: another replica will answer it. */
export const shuttingDown = (): ProblemError =>
  new ProblemError(503, 'OVERLOADED', 'The service is shutting down; retry, another replica will answer.', [],
    { 'retry-after': '1' })
