// What a database failure means to the client, read from what the driver says (error
// classes, server codes and labels), never from error names alone (docs/errors.md).
import {
  BSON, MongoDecompressionError, MongoDriverError, MongoError, MongoNetworkError, MongoOperationTimeoutError,
  MongoParseError, MongoServerClosedError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError,
  MongoNotConnectedError, MongoClientClosedError, MongoUnexpectedServerResponseError
} from 'mongodb'
import type { ErrorCode } from '../schemas/problem.js'

export interface DatabaseProblem {
  status: number
  code: ErrorCode
  detail: string
  param: string
}

/**
 * The retryable-reads specification's codes: what the driver retries a `find` on, once. A
 * page read through Db#command (list-endpoint/find-page.ts) is retried by us on the same.
 * HostUnreachable 6, HostNotFound 7, NetworkTimeout 89, ShutdownInProgress 91,
 * ReadConcernMajorityNotAvailableYet 134, PrimarySteppedDown 189, ExceededTimeLimit 262,
 * SocketException 9001, NotWritablePrimary 10107, InterruptedAtShutdown 11600,
 * InterruptedDueToReplStateChange 11602, NotPrimaryNoSecondaryOk 13435, NotPrimaryOrSecondary 13436.
 * https://github.com/mongodb/specifications/blob/master/source/retryable-reads/retryable-reads.md
 */
const RETRYABLE_READ_CODES = new Set([6, 7, 89, 91, 134, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436])
/**
 * Time limits: MaxTimeMSExpired 50, ExceededTimeLimit 262, NetworkInterfaceExceededTimeLimit 202
 * (a mongos whose shard did not answer in time) and LockTimeout 24.
 */
const TIME_LIMIT_CODES = new Set([50, 262, 202, 24])
const UNAVAILABLE_LABELS = ['RetryableError', 'SystemOverloadedError', 'ResetPool', 'PoolRequestedRetry']
/** Socket errors that escape the driver unwrapped. */
const SOCKET_CODES = new Set([
  'ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTCONN', 'ECONNABORTED',
  'EAI_AGAIN'
])

/**
 * A cursor that died between batches: CursorNotFound 43 (a mongos restarted, a failover, the
 * server's idle-cursor reaper) and CursorKilled 237. The page cannot go on from where it was;
 * it can be read again from the start.
 */
const CURSOR_LOST_CODES = new Set([43, 237])

/**
 * Whether a page's read that failed so may be sent again from the start, once: network errors,
 * the codes above, and a cursor lost between batches.
 */
export function isRetryableRead (error: unknown): boolean {
  if (error instanceof MongoNetworkError) return true
  return error instanceof MongoError && typeof error.code === 'number' &&
    (RETRYABLE_READ_CODES.has(error.code) || CURSOR_LOST_CODES.has(error.code))
}

/**
 * The server cannot serve now: the retryable reads' codes but the time limits, a lost cursor,
 * Interrupted 11601, and FailedToSatisfyReadPreference 133 (a mongos found no member of a shard
 * that the read preference allows, as in an election).
 */
const UNAVAILABLE_CODES = new Set([
  ...[...RETRYABLE_READ_CODES].filter((code) => !TIME_LIMIT_CODES.has(code)), ...CURSOR_LOST_CODES, 11601, 133,
  // QueryPlanKilled (an index or the collection dropped under the query), and a shard's routing
  // table changing under a mongos (StaleShardVersion 63, StaleEpoch 150, StaleConfig 13388).
  175, 63, 150, 13388
])
/** Unauthorized 13: the service's database user lacks a privilege; nothing the client sent. */
const UNAUTHORIZED_CODE = 13

/** Refusals of what the client sent, which our checks should have caught first. */
const QUERY_CODES: Record<number, [ErrorCode, string]> = {
  51091: ['INVALID_REGEX', 'MongoDB refused the $regex pattern.'],
  51108: ['INVALID_REGEX_OPTIONS', 'MongoDB refused the $regex options.'],
  2: ['INVALID_VALUE', 'MongoDB refused a value in the filter.'],
  14: ['INVALID_VALUE', 'MongoDB refused the type of a value in the filter.'],
  17287: ['INVALID_VALUE', 'MongoDB refused a value in the filter.']
}

/** A 503 about the database as a whole: `param` names the request, not one of its parameters. */
const unavailable = (code: ErrorCode, detail: string): DatabaseProblem =>
  ({ status: 503, code, detail, param: 'request' })

const UNAVAILABLE = unavailable('DATABASE_UNAVAILABLE', 'The database is not answering; try again shortly.')
/** Another server error: the database refused the read for a reason the service does not know. */
const UNFORESEEN = unavailable('DATABASE_UNAVAILABLE',
  'The database refused the read for a reason this service does not know (the log names it); try again shortly.')
const REFUSED_ACCESS = unavailable('DATABASE_UNAVAILABLE',
  'The database refuses this service the read (its user lacks a privilege); ' +
  'try again once the operator has granted it.')
const DAMAGED = unavailable('DATABASE_UNAVAILABLE',
  'The database\'s reply arrived damaged and could not be read; try again shortly.')
const TIMEOUT = unavailable('QUERY_TIMEOUT',
  'The query took longer than the service allows; narrow the filter or page with a smaller limit.')
const BUSY = unavailable('QUERY_TIMEOUT',
  'Every connection to the database stayed busy for as long as a query may take; try again shortly.')

/**
 * A reply that arrived damaged, as the driver and the page reader say it: a document that does
 * not decode (the driver's BSONError, or the page reader's MalformedBson, which is one), a
 * message whose length is negative (MongoParseError) or whose body does not match its header
 * (MongoDecompressionError), or one shorter than its own header, which the driver's bounds check
 * (src/bson.ts, validateBufferInputs) refuses with a RangeError of this text, or a cursor reply
 * without its `cursor` or batch, which the driver's cursors refuse as MongoUnexpectedServerResponseError
 * (src/cmap/wire_protocol/responses.ts). What the service sends is checked before it is encoded,
 * so none of them comes from a request.
 */
function isDamagedReply (error: Error): boolean {
  // (Passed as unknown: the guard would otherwise narrow every Error after it to never.)
  return BSON.BSONError.isBSONError(error as unknown) || error instanceof MongoParseError ||
    error instanceof MongoDecompressionError || error instanceof MongoUnexpectedServerResponseError ||
    (error instanceof RangeError && error.message.startsWith('Attempt to access memory outside buffer bounds'))
}

/**
 * A server's answer to one operation (a duplicate key, a time limit, a refused query, a code the
 * service does not know), not a network or state error (the server unreachable, stepping down,
 * shutting down, the service's user refused).
 */
export function refusedTheOperation (error: unknown): boolean {
  if (!(error instanceof MongoServerError)) return false
  const problem = classifyDatabaseError(error)
  return problem?.code !== 'DATABASE_UNAVAILABLE' || problem === UNFORESEEN
}

/** The client's problem for a database failure, or undefined when it is not one (a bug: 500). */
export function classifyDatabaseError (error: Error): DatabaseProblem | undefined {
  if (error instanceof MongoOperationTimeoutError) return TIMEOUT
  if (error instanceof MongoServerError) {
    const code = typeof error.code === 'number' ? error.code : -1
    if (TIME_LIMIT_CODES.has(code)) return TIMEOUT
    if (UNAVAILABLE_CODES.has(code) ||
      UNAVAILABLE_LABELS.some((label) => error.hasErrorLabel(label))) return UNAVAILABLE
    if (code === UNAUTHORIZED_CODE) return REFUSED_ACCESS
    // A `$group` past its memory (QueryExceededMemoryLimitNoDiskUseAllowed): too many groups to count.
    if (code === 292) {
      return {
        status: 400,
        code: 'INVALID_GROUP',
        detail: 'by has more distinct values than the database can group in memory; narrow the filter',
        param: 'by'
      }
    }
    const query = QUERY_CODES[code]
    if (query !== undefined) {
      const [problemCode, detail] = code === 2 && /regular expression/i.test(error.message)
        ? ['INVALID_REGEX' as const, QUERY_CODES[51091]?.[1] ?? '']
        : query
      return { status: 400, code: problemCode, detail, param: 'filter' }
    }
    // A database fault is never a 500: a 503, logged as every database fault is, with its code.
    return UNFORESEEN
  }
  if (error instanceof MongoNetworkError || error instanceof MongoServerSelectionError ||
    error instanceof MongoTopologyClosedError || error instanceof MongoNotConnectedError ||
    error instanceof MongoServerClosedError || error instanceof MongoClientClosedError) return UNAVAILABLE
  if (error instanceof MongoError && UNAVAILABLE_LABELS.some((label) => error.hasErrorLabel(label))) return UNAVAILABLE
  // A checkout that waited as long as server selection may (serverSelectionTimeoutMS, the query
  // budget): every connection was held by slower work. A time limit, not an outage.
  if (error.name === 'MongoWaitQueueTimeoutError') return BUSY
  // The connection pool's other errors (the pool closed or cleared under the request) are not
  // exported by the driver; they are the driver errors with an `address`.
  if (error instanceof MongoDriverError &&
    typeof (error as { address?: unknown }).address === 'string') return UNAVAILABLE
  const socketCode = (error as { code?: unknown }).code
  if (typeof socketCode === 'string' && SOCKET_CODES.has(socketCode)) return UNAVAILABLE
  if (isDamagedReply(error)) return DAMAGED
  // The request's own bound (Database#bounded, database/bounded-work.ts): the database did not answer in time.
  if (error.name === 'TimeoutError' ||
    (error as { cause?: { name?: string } }).cause?.name === 'TimeoutError') return TIMEOUT
  return undefined
}
