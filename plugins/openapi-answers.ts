// What an operation may answer beside its route's own responses, added to the OpenAPI document
// only (route schemas also compile the serializers): the conditional request's 304, the rate
// limit's 429, the headers that come with them and with 401 and 503, and the problems that the
// HTTP layer raises before any route runs.
import type { FastifySchema, RouteOptions } from 'fastify'
import { problem, problemResponse } from '../schemas/problem.js'
import { HEADERS_TOO_LARGE_DETAIL } from './errors.js'
import { rateLimited } from './load-shedding.js'
import { takesListQuery } from './list-query.js'

type Response = Record<string, unknown> & { headers?: Record<string, unknown> }

const VALIDATOR = {
  etag: { type: 'string', description: 'The answer\'s weak validator: sent back in If-None-Match, it gets a 304 while the answer would be the same' },
  'cache-control': { type: 'string', const: 'no-cache', description: 'A cache may keep the answer, and revalidates it before each use' }
}
const RETRY_AFTER = { 'retry-after': { type: 'integer', minimum: 1, description: 'Seconds to wait before trying again' } }
const RATE_LIMIT = {
  'ratelimit-limit': { type: 'integer', description: 'List requests a caller may make a minute, on this replica' },
  'ratelimit-remaining': { type: 'integer', description: 'What is left of them' },
  'ratelimit-reset': { type: 'integer', description: 'Seconds until the minute is over' }
}
const WWW_AUTHENTICATE = { 'www-authenticate': { type: 'string', description: 'The scheme, `Bearer realm="listing-api"`, and why the token was refused (RFC 6750)' } }

export interface AnswerOptions {
  /** RATE_LIMIT_PER_MINUTE, when set. */
  perMinute: number | undefined
}

/** The route's schema with what else the operation answers; a hidden or schema-less route as it is. */
export function withTransportAnswers (schema: FastifySchema | undefined, route: RouteOptions, { perMinute }: AnswerOptions): FastifySchema | undefined {
  if (schema === undefined || schema.hide === true) return schema
  const response: Record<string, Response> = { ...(schema.response as Record<string, Response> | undefined) }
  const headers = (status: string, added: Record<string, unknown>): void => {
    const entry = response[status]
    if (entry !== undefined) response[status] = { ...entry, headers: { ...entry.headers, ...added } }
  }
  if (route.config?.conditional === true) headers('200', VALIDATOR)
  if (perMinute !== undefined && takesListQuery(route.config)) {
    headers('200', RATE_LIMIT)
    response['429'] = {
      ...problemResponse('More list requests a minute than RATE_LIMIT_PER_MINUTE (RATE_LIMITED); retry after Retry-After', rateLimited(perMinute, 17)),
      headers: { ...RETRY_AFTER, ...RATE_LIMIT }
    }
  }
  // The 200's headers, as RFC 9110 (15.4.5) asks of a 304.
  if (route.config?.conditional === true) response['304'] = { type: 'null', description: 'Not modified: the If-None-Match validator still holds (no body)', headers: response['200']?.headers }
  headers('401', WWW_AUTHENTICATE)
  headers('503', RETRY_AFTER)
  response.default = problemResponse(
    'A problem raised before the operation runs: URL or headers too large (431 HEADERS_TOO_LARGE, 414 URI_TOO_LONG), a body on GET, an Expect other than 100-continue or malformed HTTP (400, 417, 408 BAD_REQUEST)',
    problem(431, 'HEADERS_TOO_LARGE', HEADERS_TOO_LARGE_DETAIL)
  )
  return { ...schema, response }
}
