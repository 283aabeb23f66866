// The problems and examples every list shares: its 400, 401, 404 and 503 answers as the OpenAPI
// document shows them, and the cursor's 400s.
import { MongoNetworkError, type ObjectId } from 'mongodb'
import { compileListQuery, type ListLimits } from '../list-query/compile-list-query.js'
import type { QuerySpec } from '../list-query/query-spec.js'
import { classifyDatabaseError } from '../database/classify-error.js'
import { ProblemError, problem } from '../schemas/problem.js'

export function cursorProblem (code: 'INVALID_CURSOR' | 'CURSOR_MISMATCH', message: string): ProblemError {
  return ProblemError.about('after', 400, code, message)
}

/** The request the 400 example of every list answers (a field no kind has, a limit below 0). */
export const BAD_REQUEST_EXAMPLE = 'filter={"nmae":"x"}&sort=nmae&limit=-1'

/** A project id no demo project has: the 404 example. */
export const UNKNOWN_PROJECT_EXAMPLE = '65cd7e3007370d3300000009'

/** The 401 of a list without a bearer token (plugins/access-control.ts sends it). */
export const NO_TOKEN_MESSAGE = 'This list needs a bearer token: Authorization: Bearer <JWT>'

export function projectNotFound (id: ObjectId): ProblemError {
  return ProblemError.about('projectId', 404, 'PROJECT_NOT_FOUND', `No project has the id '${String(id)}'`)
}

export function badRequestExample (spec: QuerySpec, limits: ListLimits): ProblemError {
  const result = compileListQuery(BAD_REQUEST_EXAMPLE, spec, limits)
  if (result.ok) throw new Error(`${BAD_REQUEST_EXAMPLE} must be refused by every kind`)
  return ProblemError.badRequest(result.problems)
}

/** What a list answers while its database cannot be reached (database/classify-error.ts). */
export const databaseDown = ((): ReturnType<typeof problem> => {
  const down = classifyDatabaseError(new MongoNetworkError('connect ECONNREFUSED'))
  if (down === undefined) throw new Error('a network error is a database outage')
  return problem(down.status, down.code, down.detail, [], down.param)
})()
