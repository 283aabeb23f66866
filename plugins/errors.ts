import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { PROBLEM_CONTENT_TYPE, type ErrorCode, type Problem, type ProblemItem } from '../schemas/problem.js'

const MAX_ERRORS = 20

/** An error the client can act on; the error handler answers it as problem+json. */
export class ProblemError extends Error {
  readonly errors: ProblemItem[]

  constructor (readonly status: number, readonly code: ErrorCode, detail: string, errors: ProblemItem[] = []) {
    super(detail)
    this.name = 'ProblemError'
    this.errors = errors.slice(0, MAX_ERRORS)
  }

  /** A 400 listing every problem found; `code`/`detail` repeat the first. */
  static badRequest (errors: ProblemItem[]): ProblemError {
    const first = errors[0] as ProblemItem
    return new ProblemError(400, first.code, first.message, errors)
  }
}

function problem (status: number, code: ErrorCode, detail: string, errors?: ProblemItem[]): Problem {
  const body: Problem = { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status, code, detail }
  if (errors !== undefined && errors.length > 0) body.errors = errors
  return body
}

const UNREACHABLE = new Set(['MongoServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoTopologyClosedError', 'MongoNotConnectedError', 'MongoPoolClearedError'])
const MAX_TIME_MS_EXPIRED = 50

function fromValidation (error: FastifyError): Problem {
  const param = error.validationContext ?? 'request'
  const errors: ProblemItem[] = (error.validation ?? []).map((v) => {
    const unknown = v.keyword === 'additionalProperties'
    const name = unknown ? String((v.params as { additionalProperty?: string }).additionalProperty) : v.instancePath.slice(1)
    return {
      param: name || param,
      pointer: '',
      code: unknown ? 'UNKNOWN_PARAMETER' : 'INVALID_VALUE',
      message: unknown ? `Unknown parameter '${name}'` : `${param} ${v.instancePath} ${v.message ?? 'is invalid'}`.replace(/\s+/g, ' ')
    }
  })
  const first = errors[0]
  return problem(400, first?.code ?? 'INVALID_VALUE', first?.message ?? error.message, errors)
}

/** Maps any failure to CONTRACT.md §5; internals go to the log, never into the body. */
export function toProblem (error: FastifyError | Error): Problem {
  if (error instanceof ProblemError) return problem(error.status, error.code, error.message, error.errors)
  const fastifyError = error as FastifyError
  if (fastifyError.validation !== undefined) return fromValidation(fastifyError)
  if (UNREACHABLE.has(error.name)) return problem(503, 'DATABASE_UNAVAILABLE', 'The database is not answering; try again shortly.')
  if (error.name === 'MongoServerError' && (error as { code?: unknown }).code === MAX_TIME_MS_EXPIRED) {
    return problem(503, 'QUERY_TIMEOUT', 'The query took longer than the service allows; narrow the filter or page with a smaller limit.')
  }
  const status = fastifyError.statusCode ?? 500
  if (status === 404) return problem(404, 'NOT_FOUND', 'Not found.')
  if (status >= 400 && status < 500) return problem(status, 'INVALID_VALUE', error.message)
  return problem(500, 'INTERNAL_ERROR', 'An unexpected error occurred; it has been logged.')
}

async function errorsPlugin (fastify: FastifyInstance) {
  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    const body = toProblem(error)
    if (body.status >= 500) request.log.error({ err: error }, 'request failed')
    else request.log.info({ code: body.code }, 'request rejected')
    return reply.code(body.status).type(PROBLEM_CONTENT_TYPE).send(body)
  })

  fastify.setNotFoundHandler((request, reply) => {
    const body = problem(404, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`)
    return reply.code(404).type(PROBLEM_CONTENT_TYPE).send(body)
  })
}

export default fp(errorsPlugin, { name: 'errors' })
