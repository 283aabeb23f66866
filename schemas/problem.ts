import { STATUS_CODES } from 'node:http'
import { Type, type Static } from '@sinclair/typebox'

/** Every error code (README "Errors"). */
export const ERROR_CODES = [
  'INVALID_JSON', 'DUPLICATE_KEY', 'FILTER_NOT_OBJECT', 'FILTER_TOO_LARGE', 'UNKNOWN_FIELD', 'RELATED_PATH', 'SCOPE_FIELD',
  'BLOCKED_OPERATOR', 'UNKNOWN_OPERATOR', 'OPERATOR_NOT_ALLOWED', 'INVALID_VALUE', 'INVALID_DATE', 'INVALID_OBJECT_ID',
  'REGEX_TOO_LONG', 'INVALID_REGEX', 'UNSAFE_REGEX', 'INVALID_REGEX_OPTIONS', 'ARRAY_TOO_LARGE', 'MIXED_FILTER_NOTATION',
  'INVALID_SORT', 'INVALID_LIMIT', 'INVALID_SKIP', 'INVALID_COUNT', 'DUPLICATE_PARAMETER', 'UNKNOWN_PARAMETER',
  'INVALID_PROJECT_ID', 'PROJECT_NOT_FOUND', 'NOT_FOUND', 'QUERY_TIMEOUT', 'DATABASE_UNAVAILABLE', 'INTERNAL_ERROR',
  'INVALID_FIELDS', 'INVALID_CURSOR', 'CURSOR_MISMATCH', 'METHOD_NOT_ALLOWED', 'URI_TOO_LONG', 'HEADERS_TOO_LARGE', 'BAD_REQUEST',
  'UNAUTHENTICATED', 'RATE_LIMITED', 'OVERLOADED', 'AUTH_UNAVAILABLE'
] as const

export const ErrorCode = Type.Union(ERROR_CODES.map((code) => Type.Literal(code)))
export type ErrorCode = Static<typeof ErrorCode>

export const ProblemItem = Type.Object({
  param: Type.String({ description: 'The query or path parameter at fault' }),
  pointer: Type.String({ description: 'JSON Pointer into the parameter (for filter, into its JSON object; for sort, /<index>)' }),
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
  requestId: Type.Optional(Type.String({ description: 'The request id (X-Request-Id) to quote when reporting a problem' }))
}, { $id: 'Problem', title: 'Problem details (RFC 9457)' })
export type Problem = Static<typeof Problem>

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** README "Errors": every problem has an `errors` list; a lone problem lists itself. */
export function problem (status: number, code: ErrorCode, detail: string, errors: ProblemItem[] = [], param = 'request'): Problem {
  const items = errors.length > 0 ? errors : [{ param, pointer: '', code, message: detail }]
  return { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, code, detail, errors: items }
}

/** What the service answers for anything it did not foresee (the log keeps the cause). */
export const internalError = (): Problem => problem(500, 'INTERNAL_ERROR', 'An unexpected error occurred; it has been logged.')

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
      example: { ...(example instanceof ProblemError ? example.body() : example), requestId: '7f3c2a9e-4b1d-4c8e-9a51-2d6f0b8e1c47' }
    }
  }
})

const MAX_ERRORS = 20

/** An error the client can act on; the error handler answers it as problem+json. */
export class ProblemError extends Error {
  readonly errors: ProblemItem[]

  constructor (readonly status: number, readonly code: ErrorCode, detail: string, errors: ProblemItem[] = [], readonly headers: Record<string, string> = {}) {
    super(detail)
    this.name = 'ProblemError'
    this.errors = errors.slice(0, MAX_ERRORS)
  }

  /** The parameter a problem with one cause is about: its lone `errors` item names it. */
  param = 'request'

  /** Whether the error handler logs it; a route that logs its own state changes (/ready) says no. */
  logged = true

  /** A problem with one cause, about one parameter, header or part of the path. */
  static about (param: string, status: number, code: ErrorCode, detail: string, headers: Record<string, string> = {}): ProblemError {
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
