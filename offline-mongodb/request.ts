// What every command handler works with: the request, its numeric arguments, and the scan that
// honours maxTimeMS as mongod does.
import { Long } from 'bson'
import { collationOption } from './collation-spec.js'
import { collationOf, type Collation } from './collator.js'
import { CommandError } from './errors.js'
import type { ServerState } from './server-state.js'
import { compileFilter } from './query-operators.js'
import type { Doc } from './storage.js'

export interface Request {
  cmd: Doc
  db: string
  state: ServerState
  started: number
  /** The cluster time a majority read reads as of (hazards: the majority point lags); else the latest. */
  readAt?: bigint
  /** The command's collation (useCollation), for its filters, sorts and groups; none is binary. */
  collation?: Collation
}

/** Reads the command's `collation` option (manual: "Collation") into the request, and returns it. */
export function useCollation (request: Request, command: string): Collation | undefined {
  request.collation = collationOf(collationOption(request.cmd.collation, `${command}.collation`))
  return request.collation
}

/** A collection's documents as the request reads them: as they are, or as of its read point. */
export function collectionDocuments (request: Request, coll: string): Doc[] {
  const { db, readAt, state } = request
  const current = state.storage.database(db).get(coll)?.docs ?? []
  if (readAt === undefined || state.hazards === undefined) return current
  return state.hazards.history.documentsAt(`${db}.${coll}`, current, readAt)
}

export function count (value: unknown, field: string, fallback: number): number {
  if (value === undefined || value === null) return fallback
  const n = value instanceof Long ? value.toNumber() : Number(value)
  if (!Number.isInteger(n) || n < 0) throw new CommandError(2, 'BadValue', `${field} must be a non-negative integer`)
  return n
}

/** mongod checks maxTimeMS while it works: so does the scan, between documents, and once after it. */
export function checkTime ({ cmd, state, started }: Request): void {
  const maxTimeMS = count(cmd.maxTimeMS, 'maxTimeMS', 0)
  if (maxTimeMS <= 0) return
  if (state.failPoints.has('maxTimeAlwaysTimeOut') || Date.now() - started > maxTimeMS) {
    throw new CommandError(50, 'MaxTimeMSExpired', 'operation exceeded time limit')
  }
}

/** How many documents are tested between two clock readings. */
const TIME_CHECK_EVERY = 32

/** The documents that pass `filter`, giving up with MaxTimeMSExpired once maxTimeMS has passed. */
export function scan (request: Request, docs: Doc[], filter: unknown): Doc[] {
  const test = compileFilter(filter, request.collation)
  const out: Doc[] = []
  for (let i = 0; i < docs.length; i++) {
    if (i % TIME_CHECK_EVERY === TIME_CHECK_EVERY - 1) checkTime(request)
    if (test(docs[i] as Doc)) out.push(docs[i] as Doc)
  }
  return out
}

export function collectionName (cmd: Doc, key: string): string {
  const name = cmd[key]
  if (typeof name !== 'string') {
    throw new CommandError(73, 'InvalidNamespace', `collection name has invalid type ${typeof name}`)
  }
  return name
}
