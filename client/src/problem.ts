// The service's problem+json answers (RFC 9457) as errors, and what the client reads of them.
export interface ProblemItem { param: string, pointer: string, code: string, message: string }

/** An answer of the service that is not a page: the problem+json it sent (RFC 9457). */
export class ListingProblem extends Error {
  readonly status: number
  readonly code: string
  readonly errors: ProblemItem[]
  readonly requestId: string | undefined
  readonly detail: string
  /** From Retry-After, when the service sent one. */
  readonly retryAfterMs: number | undefined

  constructor (problem: {
    status: number, code: string, detail: string, errors?: ProblemItem[], requestId?: string, retryAfterMs?: number
  }) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`)
    this.name = 'ListingProblem'
    this.status = problem.status
    this.code = problem.code
    this.detail = problem.detail
    this.errors = problem.errors ?? []
    this.requestId = problem.requestId
    this.retryAfterMs = problem.retryAfterMs
  }
}

/** IMF-fixdate, RFC 850 and asctime dates (RFC 9110 §5.6.7) begin with the day's name. */
const HTTP_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? [\dA-Za-z :-]+$/

/** Retry-After in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterMs (value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  // Date.parse takes almost anything ("1.5" is a day of 2001): only the three HTTP-date forms are dates.
  if (!HTTP_DATE.test(value.trim())) return undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Whether a feed's answer leaves one way on: listing again without `since` (docs/changes.md, "Tokens"). */
export function startsAgain (error: unknown): error is ListingProblem {
  if (!(error instanceof ListingProblem)) return false
  if (error.status === 410 && error.code === 'CHANGES_EXPIRED') return true
  return error.status === 400 && error.code === 'INVALID_CURSOR' && error.errors[0]?.param === 'since'
}

export async function problemOf (response: Response): Promise<ListingProblem> {
  const retryAfter = retryAfterMs(response.headers.get('retry-after'))
  const requestId = response.headers.get('x-request-id') ?? undefined
  const text = await response.text()
  try {
    const body = JSON.parse(text) as {
      status?: number, code?: string, detail?: string, errors?: ProblemItem[], requestId?: string
    }
    if (typeof body.code === 'string') {
      return new ListingProblem({
        status: response.status,
        code: body.code,
        detail: body.detail ?? '',
        errors: body.errors,
        requestId: body.requestId ?? requestId,
        retryAfterMs: retryAfter
      })
    }
  } catch {}
  // Not the service's own answer (an ingress's error page, say).
  return new ListingProblem({
    status: response.status,
    code: `HTTP_${response.status}`,
    detail: text.slice(0, 200),
    requestId,
    retryAfterMs: retryAfter
  })
}

/** A 2xx answer's JSON; a body that is not JSON (a proxy's sign-in page, say) is a problem not worth retrying. */
export function jsonOf (response: Response, text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    const requestId = response.headers.get('x-request-id') ?? undefined
    throw new ListingProblem({
      status: response.status, code: 'INVALID_RESPONSE', detail: `not JSON: ${text.slice(0, 200)}`, requestId
    })
  }
}
