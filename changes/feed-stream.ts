// A change feed as a stream (`Accept: application/x-ndjson`, docs/changes.md): event lines, each
// batch followed by a checkpoint `{"next", "synced"}`, a checkpoint at least every 15 s when
// nothing happens, and a last checkpoint when the stream ends (CHANGES_STREAM_SECONDS, the
// service stopping). A reader more than `limit` × 10 events behind is ended with a problem line.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { classifyDatabaseError } from '../database/classify-error.js'
import { ProblemError, internalError, problem, type Problem } from '../schemas/problem.js'
import { weightOf } from '../lib/accept-header.js'
import type { ChangeHub } from './change-hub.js'
import type { FeedPosition } from './feed-token.js'
import type { FeedStep } from './feed-steps.js'

export const NDJSON = 'application/x-ndjson'

/**
 * Whether Accept asks for the stream (RFC 9110 §12.5.1, docs/changes.md): NDJSON acceptable, with a higher q than
 * JSON, or the same q when named itself (a wildcard alone is JSON's).
 */
export function asksForStream (accept: string | undefined): boolean {
  const ndjson = weightOf(accept, NDJSON)
  const json = weightOf(accept, 'application/json')
  return ndjson.q > 0 && (ndjson.q > json.q || (ndjson.q === json.q && ndjson.specificity === 2))
}

/** A checkpoint comes at least this often on a quiet stream (proxies' read timeouts are 60 s by default). */
export const CHECKPOINT_MS = 15_000

export interface StreamOptions {
  fastify: FastifyInstance
  request: FastifyRequest
  reply: FastifyReply
  hub: ChangeHub
  project: string | undefined
  limit: number
  first: FeedPosition
  next: (from: FeedPosition) => Promise<FeedStep>
  encode: (at: FeedPosition) => string
  delivered: (step: FeedStep) => void
}

/** The problem a stream's last line carries for a failure met after it began. */
function problemOf (error: unknown): Problem {
  if (error instanceof ProblemError) return error.body()
  const found = error instanceof Error ? classifyDatabaseError(error) : undefined
  return found === undefined ? internalError() : problem(found.status, found.code, found.detail, [], found.param)
}

const MIB = 1024 * 1024
/**
 * What a stream holds for a slow client at most, whatever its documents weigh: events alone would
 * let large ones take 10 × limit of them.
 */
const BEHIND_BYTES = 16 * MIB

export async function streamFeed (
  { fastify, request, reply, hub, project, limit, first, next, encode, delivered }: StreamOptions
): Promise<FastifyReply> {
  // The first answer is read before anything is written: a 400, 410 or 503 is still a problem answer.
  let mark = hub.mark()
  let step = await next(first)
  const raw = reply.raw
  reply.hijack()
  const headers = {
    ...reply.getHeaders(),
    'content-type': 'application/x-ndjson; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no'
  }
  delete headers['content-length']
  if (request.method === 'HEAD') {
    // GET's headers (RFC 9110, 9.3.2), after its first read; no line, nothing left open. Its
    // framing too: without a length or chunked coding, Node's client would not reuse the connection.
    raw.writeHead(200, { ...headers, 'transfer-encoding': 'chunked' } as Record<string, string>)
    raw.end()
    return reply
  }
  const unexempt = fastify.lifecycle.exempt(raw)
  raw.writeHead(200, headers as Record<string, string>)
  const behindAt = limit * 10
  const endsAt = Date.now() + fastify.config.CHANGES_STREAM_SECONDS * 1000
  let pending = 0
  // A client may have left during the first read, its 'close' already past.
  let gone = raw.closed
  const written = (): void => { pending-- }
  raw.once('close', () => { gone = true })
  const line = (value: unknown, counted: boolean): void => {
    if (counted) pending++
    raw.write(`${typeof value === 'string' ? value : JSON.stringify(value)}\n`, counted ? written : undefined)
  }
  let position = step.position
  // The first answer is followed by a checkpoint, events or not: the client holds a token at once.
  let checkpointAt = 0
  const checkpoint = (): void => {
    line({ next: encode(position), synced: step.synced }, false)
    checkpointAt = Date.now()
  }
  const finish = (failure?: Problem): void => {
    if (failure !== undefined) line({ problem: { ...failure, requestId: request.id } }, false)
    raw.end()
    // Ended, its rest is an answer like any other: SEND_TIMEOUT_MS for the client to take it.
    unexempt()
  }
  try {
    for (;;) {
      for (const event of step.events) line(event, true)
      delivered(step)
      position = step.position
      if (step.events.length > 0 || Date.now() - checkpointAt >= CHECKPOINT_MS) checkpoint()
      if (gone) return reply
      if (pending > behindAt || raw.writableLength > BEHIND_BYTES) {
        finish(problemOf(new ProblemError(503, 'OVERLOADED',
          `The client reads too slowly: more than ${behindAt} events (limit × 10) or ${BEHIND_BYTES / MIB} MiB ` +
          'were not taken. Resume from the last checkpoint.')))
        return reply
      }
      if (fastify.changes.stopping || Date.now() >= endsAt) {
        if (step.events.length === 0) checkpoint()
        finish()
        return reply
      }
      // A full answer: more may be ready at once.
      if (step.events.length < limit && step.position.phase === 'following' &&
        !hub.movedSince(step.position.point, project, mark)) {
        await hub.nextWake(project, Math.min(endsAt, checkpointAt + CHECKPOINT_MS), fastify.changes.onStop, raw)
        if (gone) return reply
        // Stopping: the stream ends at its last position, without another read of a database that may be stopping too.
        if (fastify.changes.stopping) {
          checkpoint()
          finish()
          return reply
        }
        if (!hub.isRunning) hub.ready().catch(() => {})
      }
      mark = hub.mark()
      step = await next(position)
    }
  } catch (error) {
    // The stream has begun: its end says what went wrong; the client resumes from its last checkpoint.
    if (!gone) finish(problemOf(error))
    if (!(error instanceof ProblemError)) request.log.warn({ err: error }, 'change feed stream ended by a failure')
    return reply
  }
}
