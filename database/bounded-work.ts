// How the service's database work is run: bounded by a request's deadline, and timed for the
// metrics (plugins/mongodb.ts gives both as `fastify.database`).
import { ProblemError } from '../schemas/problem.js'
import { classifyDatabaseError, refusedTheOperation } from './classify-error.js'
import type { CommandListener, Database } from './database.js'

/**
 * The 503 of a request while the database refuses connections: the readiness checks have logged
 * the outage once, and /ready reports it.
 */
function refusing (): ProblemError {
  const error = new ProblemError(
    503, 'DATABASE_UNAVAILABLE', 'The database refuses connections; try again shortly.', [], { 'retry-after': '1' }
  )
  error.logged = false
  return error
}

/** A request's deadline passed: read as QUERY_TIMEOUT (database/classify-error.ts). */
const timedOut = (): DOMException => new DOMException('The database did not answer in time', 'TimeoutError')

/** The promise of `work`, rejected rather than thrown when `work` throws before returning one. */
function attempt<T> (work: () => Promise<T>): Promise<T> {
  try {
    return work()
  } catch (error) {
    return Promise.reject(error)
  }
}

/** What a bounded call tells the readiness checks, and asks them (database/readiness.ts). */
export interface ReadinessSignals {
  /** Every member refuses connections: a request would wait its whole budget for the same 503. */
  refusesConnections: () => boolean
  /** The database answered. */
  answered: () => void
  /** The database seems out of reach: /ready says so at once, and a ping checks. */
  suspect: () => void
}

/**
 * Database#bounded: runs a request's work with a signal that aborts it once `budget` ms have
 * passed since the request arrived (its `databaseDeadline`), or since the call without a budget.
 */
export function boundedWork (readiness: ReadinessSignals, budget: number): Database['bounded'] {
  return (work, shared) => {
    // Every member refuses connections (/ready says so): the request would wait out server
    // selection, the whole budget, for the same 503. An election still gets the budget.
    if (readiness.refusesConnections()) return Promise.reject(refusing())
    let ms = budget
    if (shared !== undefined) {
      if (shared.databaseDeadline === 0) shared.databaseDeadline = Date.now() + budget
      else ms = shared.databaseDeadline - Date.now()
      if (ms <= 0) return Promise.reject(timedOut())
    }
    const deadline = new AbortController()
    let late = (_reason: unknown): void => {}
    const timer = setTimeout(() => {
      const reason = timedOut()
      deadline.abort(reason)
      // Work that heeds the signal has failed by the next turn; work that does not (a driver
      // path that drops it) is left to itself, and the request still answers at its deadline.
      setImmediate(late, reason)
    }, ms)
    const answered = attempt(() => work(deadline.signal)).then((result) => {
      clearTimeout(timer)
      readiness.answered()
      return result
    }, (error: unknown) => {
      if (refusedTheOperation(error)) {
        // The others of the request (the count beside a page the server refused) run on to
        // their answers, still bounded by the deadline: aborting an operation in flight closes
        // its connection, and aborts by the hundred can empty the pool (the driver's
        // Abortable.signal documentation, mongodb.d.ts).
        timer.unref()
      } else {
        clearTimeout(timer)
        // The database out of reach, or the request failed otherwise: whatever else it started stops too.
        deadline.abort(error)
      }
      // A database out of reach: /ready says so at once, and a ping checks.
      if (classifyDatabaseError(error as Error)?.code === 'DATABASE_UNAVAILABLE') readiness.suspect()
      throw error
    })
    return Promise.race([answered, new Promise<never>((_resolve, reject) => { late = reject })])
  }
}

/**
 * Database#timed: runs one command, timed for `listeners` (the metrics). Written with then()
 * rather than as an async function around an await: one promise and one turn of the microtask
 * queue less for every command of every request.
 */
export function timedWork (listeners: readonly CommandListener[]): Database['timed'] {
  return <T>(command: string, work: () => Promise<T>): Promise<T> => {
    if (listeners.length === 0) return attempt(work)
    const started = performance.now()
    const report = (outcome: 'success' | 'failure'): void => {
      const seconds = (performance.now() - started) / 1000
      for (const listener of listeners) listener(command, outcome, seconds)
    }
    return attempt(work).then((result) => {
      report('success')
      return result
    }, (error: unknown) => {
      report('failure')
      throw error
    })
  }
}
