// The problems a change feed answers for its database's faults (docs/errors.md lists them).
import { ProblemError } from '../schemas/problem.js'
import { isHistoryLost, isUnreadable, unavailableReason } from './change-events.js'

/** The 410 of a token older than the database's history. */
export function expired (): ProblemError {
  return ProblemError.about('since', 410, 'CHANGES_EXPIRED',
    'The database no longer holds the changes after this token (its history is shorter, or the database was ' +
    'replaced): start again without since, and replace the copy with what the feed lists.')
}

/** The 503 of a database that cannot give feeds. */
export function unavailable (reason: string): ProblemError {
  return new ProblemError(503, 'CHANGES_UNAVAILABLE',
    `Change feeds are not available: ${reason}. Lists are unaffected.`, [], { 'retry-after': '30' })
}

/** The 410 of a token that stands before a change no stream can read. */
function unreadable (): ProblemError {
  return ProblemError.about('since', 410, 'CHANGES_EXPIRED',
    'A change after this token can never be read from the database (an event over MongoDB\'s 16 MiB limit): ' +
    'start again without since, and replace the copy with what the feed lists.')
}

/** The error a feed answers for a failure of its database work. */
export function feedError (error: unknown): unknown {
  if (isHistoryLost(error)) return expired()
  if (isUnreadable(error)) return unreadable()
  const reason = unavailableReason(error)
  return reason === undefined ? error : unavailable(reason)
}
