import { randomUUID } from 'node:crypto'
import diagnosticsChannel from 'node:diagnostics_channel'
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { finished } from 'node:stream'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import {
  PROBLEM_CONTENT_TYPE,
  ProblemError,
  internalError,
  problem,
  type ErrorCode,
  type Problem,
  type ProblemItem
} from '../schemas/problem.js'
import { classifyDatabaseError } from '../database/classify-error.js'
import { corsHeadersBeforeHooks } from './cors.js'
import { requestIdOf } from './request-id.js'
import { validHostField } from '../lib/host.js'
import { varyOn } from '../lib/vary.js'
import { readTarget } from '../lib/request-target.js'

function fromValidation (error: FastifyError): Problem {
  const param = error.validationContext ?? 'request'
  const errors: ProblemItem[] = (error.validation ?? []).map((v) => {
    const unknown = v.keyword === 'additionalProperties'
    const name = unknown
      ? String((v.params as { additionalProperty?: string }).additionalProperty)
      : v.instancePath.slice(1)
    return {
      param: name || param,
      pointer: '',
      code: unknown ? 'UNKNOWN_PARAMETER' : 'INVALID_VALUE',
      message: unknown
        ? `Unknown parameter '${name}'`
        : `${param} ${v.instancePath} ${v.message ?? 'is invalid'}`.replace(/\s+/g, ' ')
    }
  })
  const first = errors[0]
  return problem(400, first?.code ?? 'INVALID_VALUE', first?.message ?? error.message, errors)
}

/** Codes for what the HTTP layer refuses by status, when nothing more precise is known. */
const HTTP_CODES: Record<number, ErrorCode> = {
  404: 'NOT_FOUND', 405: 'METHOD_NOT_ALLOWED', 414: 'URI_TOO_LONG', 429: 'RATE_LIMITED', 431: 'HEADERS_TOO_LARGE'
}

/** Fastify's own errors raised before a route runs, in our words (their messages may echo input). */
const FRAMEWORK_ERRORS: Record<string, [number, ErrorCode, string]> = {
  FST_ERR_BAD_URL: [400, 'BAD_REQUEST', 'The URL is not valid (check its percent-encoding).'],
  FST_ERR_MAX_PARAM_LENGTH: [414, 'URI_TOO_LONG', 'A path segment of the URL is too long.'],
  FST_ERR_ASYNC_CONSTRAINT: [400, 'BAD_REQUEST', 'The request could not be routed.'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'BAD_REQUEST', 'The request body is too large; list requests carry no body.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'BAD_REQUEST', 'Unsupported media type; list requests carry no body.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'BAD_REQUEST', 'The request body is empty.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'BAD_REQUEST', 'The Content-Length header does not match the body.']
}

/**
 * Maps any failure to a problem+json answer (docs/errors.md); internals go to the log, never into
 * the body.
 */
export function toProblem (error: FastifyError | Error): Problem {
  if (error instanceof ProblemError) return error.body()
  const fastifyError = error as FastifyError
  if (fastifyError.validation !== undefined) return fromValidation(fastifyError)
  const framework = fastifyError.code === undefined ? undefined : FRAMEWORK_ERRORS[fastifyError.code]
  if (framework !== undefined) return problem(...framework)
  const database = classifyDatabaseError(error)
  if (database !== undefined) return problem(database.status, database.code, database.detail, [], database.param)
  const status = fastifyError.statusCode ?? 500
  if (status >= 400 && status < 500) {
    return problem(status, HTTP_CODES[status] ?? 'BAD_REQUEST', STATUS_CODES[status] ?? 'Bad request')
  }
  return internalError()
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The problem code the request was answered with, for the metrics. */
    problemCode: ErrorCode | null
  }
}

function send (request: FastifyRequest, reply: FastifyReply, body: Problem, headers: Record<string, string> = {}) {
  request.problemCode = body.code
  body.requestId = request.id
  headers['x-request-id'] = request.id
  // Every 503 (DATABASE_UNAVAILABLE, QUERY_TIMEOUT, OVERLOADED) is worth retrying soon.
  if (body.status === 503) headers['retry-after'] ??= '1'
  reply.code(body.status).headers(headers)
  // A problem is compressed as any answer is (a long 400): caches must know it depends on Accept-Encoding.
  if (reply.server.config.COMPRESSION === 'on') varyOn(reply, 'accept-encoding')
  return reply.type(PROBLEM_CONTENT_TYPE).send(body)
}

/**
 * A refusal no onResponse hook sees: Fastify runs none for `frameworkErrors` (its request has the
 * router's own context), and the others are written on the socket. plugins/metrics.ts counts them.
 */
export interface Refusal {
  /** The server that refused: a process may run several apps (the tests do). */
  server: Server
  /** The request's method; null where Node's parser refused before one was known. */
  method: string | null
  status: number
  code: ErrorCode
  /** From the refusal to its answer written whole (or its connection gone). */
  seconds: number
}

/** The node:diagnostics_channel each Refusal is published on, while someone listens. */
export const REFUSALS_CHANNEL = 'listing-api:refusals'
const refusals = diagnosticsChannel.channel(REFUSALS_CHANNEL)

/** Publishes `refusal` once `answer` is written, or its connection gone: nothing when no one listens. */
function announce (answer: NodeJS.WritableStream, refusal: Omit<Refusal, 'seconds'>): void {
  if (!refusals.hasSubscribers) return
  const started = performance.now()
  finished(answer, { readable: false }, () => {
    refusals.publish({ ...refusal, seconds: (performance.now() - started) / 1000 } satisfies Refusal)
  })
}

/**
 * For Fastify's `frameworkErrors` option: errors raised while routing (bad URL, overlong
 * parameter) answered like all others, with the CORS headers no hook has set.
 */
export function frameworkErrors (error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const body = toProblem(error)
  announce(reply.raw, { server: request.server.server, method: request.method, status: body.status, code: body.code })
  return send(request, reply, body, corsHeadersBeforeHooks(request))
}

/** How many Host lines a request has: RFC 9112, 3.2 refuses more than one. */
function hostLines (rawHeaders: string[]): number {
  let lines = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string
    if (name.length === 4 && name.toLowerCase() === 'host') lines++
  }
  return lines
}

/**
 * The body of a problem answered before Fastify made a request: the id is the request's own
 * where its headers were read whole, else a new one, sent in the body and in X-Request-Id.
 */
function unroutedProblem (
  status: number, code: ErrorCode, detail: string, requestId: string = randomUUID()
): { requestId: string, body: string } {
  return { requestId, body: JSON.stringify({ ...problem(status, code, detail), requestId }) }
}

/**
 * A problem written straight to a socket the HTTP layer gave up on, then the connection closed;
 * announced where its server is known.
 */
function endWithProblem (
  socket: Socket, refusal: Omit<Refusal, 'server' | 'seconds'> & { server: Server | undefined },
  detail: string, headers = ''
): void {
  const { server, status, code } = refusal
  if (server !== undefined) announce(socket, { ...refusal, server })
  const { requestId, body } = unroutedProblem(status, code, detail)
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${headers}X-Request-Id: ${requestId}\r\n` +
    `Connection: close\r\n\r\n${body}`)
  // A client that neither reads the answer nor closes (a slowloris one, say) would keep the
  // half-closed socket: it has a second to take it.
  setTimeout(() => { socket.destroy() }, 1000).unref()
}

export const HEADERS_TOO_LARGE_DETAIL =
  'The URL and headers are larger than the server accepts (16 KiB); shorten the filter, or the largest header.'

/**
 * For Fastify's `clientErrorHandler`: what Node's HTTP parser refuses (oversized URL or
 * headers, malformed requests) never reaches a route, so the answer is written here. Fastify
 * binds `this` to its instance, whose server the refusal is announced for.
 */
export function clientErrorHandler (
  this: FastifyInstance | undefined, error: Error & { code?: string }, socket: Socket
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return
  const [status, code, detail]: [number, ErrorCode, string] = error.code === 'HPE_HEADER_OVERFLOW'
    ? [431, 'HEADERS_TOO_LARGE', HEADERS_TOO_LARGE_DETAIL]
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'BAD_REQUEST', 'The request took too long to arrive.']
      : [400, 'BAD_REQUEST', 'The request is not valid HTTP.']
  endWithProblem(socket, { server: this?.server, method: null, status, code }, detail)
}

/**
 * Node's server answers two requests itself, without a body, unless told otherwise: a CONNECT
 * (its socket is destroyed) and an `Expect` other than 100-continue (a bare 417). Both are
 * problems here, as every refusal of the HTTP layer is.
 */
function refuseWhatNodeAnswers (server: Server): void {
  server.on('connect', (_request: IncomingMessage, socket: Socket) => {
    endWithProblem(socket, { server, method: 'CONNECT', status: 405, code: 'METHOD_NOT_ALLOWED' },
      'CONNECT is not allowed: every route answers GET and HEAD.', 'Allow: GET, HEAD\r\n')
  })
  // RFC 9110, 10.1.1: a server may refuse an expectation it cannot meet with 417.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const { requestId, body } = unroutedProblem(417, 'BAD_REQUEST',
      'The only expectation this server meets is Expect: 100-continue.', requestIdOf(request))
    announce(response, { server, method: request.method ?? null, status: 417, code: 'BAD_REQUEST' })
    writeProblem(response, 417, body, { 'x-request-id': requestId, connection: 'close' })
  })
}

/** A problem+json answer written on Node's own response, where Fastify does not answer. */
export function writeProblem (
  response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}
): void {
  response.writeHead(status, {
    'content-type': PROBLEM_CONTENT_TYPE, 'content-length': Buffer.byteLength(body), ...headers
  }).end(body)
}

async function errorsPlugin (fastify: FastifyInstance) {
  fastify.decorateRequest('problemCode', null)
  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    const body = toProblem(error)
    if (error instanceof ProblemError && !error.logged) {
      // Logged where it was raised.
    } else if (body.status >= 500 && body.code === 'INTERNAL_ERROR') {
      request.log.error({ err: error }, 'request failed')
    } else if (body.code === 'OVERLOADED') {
      // A refusal of this replica's (load shedding, waiting feeds, shutdown), not a fault.
      request.log.info({ code: body.code }, 'request rejected')
    } else if (body.status >= 500) {
      const driverCode = error instanceof ProblemError ? undefined : (error as { code?: unknown }).code
      request.log.warn({ code: body.code, driverCode, err: error.name }, 'database fault')
    } else if (error.name.startsWith('Mongo')) {
      request.log.warn({ err: error },
        'MongoDB refused a query our checks accepted: the checks diverge from the server')
    } else {
      request.log.info({ code: body.code }, 'request rejected')
    }
    return send(request, reply, body, error instanceof ProblemError ? { ...error.headers } : {})
  })

  fastify.setNotFoundHandler((request, reply) => {
    return send(request, reply, problem(404, 'NOT_FOUND',
      `No route ${request.method} ${readTarget(request.url).path}; the routes are listed at /docs`, [], 'path'))
  })

  refuseWhatNodeAnswers(fastify.server)
  // A GET with a body is refused before anything runs (docs/errors.md): lists take no body. An
  // HTTP/1.1 request without Host is refused too (RFC 9112, 3.2): app.ts lets Node pass it on.
  fastify.addHook('onRequest', (request, _reply, done) => {
    const host = request.headers.host
    if (host === undefined && request.raw.httpVersion !== '1.0') {
      done(new ProblemError(400, 'BAD_REQUEST', 'An HTTP/1.1 request carries a Host header.'))
      return
    }
    if (host !== undefined && (!validHostField(host) || hostLines(request.raw.rawHeaders) > 1)) {
      done(ProblemError.about('host', 400, 'BAD_REQUEST',
        'The request carries one Host header, a host and an optional port (RFC 9112, 3.2).'))
      return
    }
    // The asterisk form names the server, not a resource: OPTIONS only (RFC 9112, 3.2.4).
    if (request.raw.url === '*' && request.method !== 'OPTIONS') {
      done(new ProblemError(400, 'BAD_REQUEST', 'The request target * is for OPTIONS only; name a path.'))
      return
    }
    if (request.method === 'GET' || request.method === 'HEAD') {
      const { 'content-length': length, 'transfer-encoding': encoding } = request.headers
      if (encoding !== undefined || (length !== undefined && length !== '0')) {
        done(new ProblemError(400, 'BAD_REQUEST', 'A GET request carries no body: send the query in the URL.'))
        return
      }
    }
    done()
  })
}

export default fp(errorsPlugin, { name: 'errors' })
