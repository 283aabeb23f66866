// The change events one oplog entry gives a stream (manual: "Change Events"): none when it is
// outside what the stream watches; a drop of the watched collection (or database) is followed
// by an `invalidate`, after which the stream is closed.
import { CommandError } from './errors.js'
import type { OplogEntry } from './oplog.js'
import { tokenOf } from './resume-token.js'
import type { Scope, StreamSpec } from './change-stream-spec.js'
import type { Doc } from './storage.js'

/** Finds a document as updateLookup reads it: at the majority point, which the event is at or before. */
export type LookupDocument = (db: string, coll: string, id: unknown) => Doc | undefined

/** Databases and collections a database or cluster stream does not show (change-streams spec, "MongoClient.watch"). */
const INTERNAL_DATABASES = new Set(['admin', 'config', 'local'])

function watches (scope: Scope, db: string, coll: string | undefined): boolean {
  if (coll?.startsWith('system.') === true) return false
  if (scope.db === undefined) return !INTERNAL_DATABASES.has(db)
  return scope.db === db && (scope.coll === undefined || scope.coll === coll)
}

/** The operation types of an entry's events, for this stream. */
function operationTypes (entry: OplogEntry, scope: Scope): string[] {
  switch (entry.op) {
    case 'noop':
      return []
    case 'drop':
      if (!watches(scope, entry.db, entry.coll)) return []
      return scope.coll === undefined ? ['drop'] : ['drop', 'invalidate']
    case 'dropDatabase':
      if (scope.coll !== undefined || !watches(scope, entry.db, undefined)) return []
      return scope.db === undefined ? ['dropDatabase'] : ['dropDatabase', 'invalidate']
    default:
      return watches(scope, entry.db, entry.coll) ? [entry.op] : []
  }
}

/** How many events an entry gives this stream. */
export function eventCount (entry: OplogEntry, scope: Scope): number {
  return operationTypes(entry, scope).length
}

function missingImage (which: 'pre' | 'post', entry: OplogEntry): CommandError {
  const kind = which === 'pre'
    ? 'a pre-image for all update, delete and replace events'
    : 'a post-image for all update events'
  return new CommandError(
    47, 'NoMatchingDocument',
    `Change stream was configured to require ${kind}, but the ${which}-image was not found for event: ` +
      `${entry.op} ${entry.db}.${entry.coll ?? ''} ${entry.ts.toString()}`
  )
}

/**
 * The post-image of an update: the document as it is now (updateLookup, null once deleted), or
 * as the update left it (whenAvailable, required), which the stand-in keeps unless collMod
 * switched `changeStreamPreAndPostImages` off.
 */
function updatedDocument (entry: OplogEntry, spec: StreamSpec, lookup: LookupDocument): Doc | null | undefined {
  if (spec.fullDocument === 'default') return undefined
  if (spec.fullDocument === 'updateLookup') return lookup(entry.db, entry.coll ?? '', entry.documentKey?._id) ?? null
  if (entry.post === undefined && spec.fullDocument === 'required') throw missingImage('post', entry)
  return entry.post ?? null
}

function documentBefore (entry: OplogEntry, spec: StreamSpec): Doc | null | undefined {
  if (spec.fullDocumentBeforeChange === 'off') return undefined
  if (entry.pre === undefined && spec.fullDocumentBeforeChange === 'required') throw missingImage('pre', entry)
  return entry.pre ?? null
}

/** The events of an entry for this stream, from its `from`-th on, each with its resume token. */
export function changeEvents (entry: OplogEntry, spec: StreamSpec, lookup: LookupDocument, from = 0): Doc[] {
  const types = operationTypes(entry, spec.scope)
  const events: Doc[] = []
  for (let i = from; i < types.length; i++) {
    const operationType = types[i] as string
    const event: Doc = {
      _id: tokenOf({ at: entry.at, seen: i + 1 }), operationType, clusterTime: entry.ts, wallTime: entry.wall
    }
    if (operationType === 'invalidate') {
      events.push(event)
      continue
    }
    if (operationType === 'insert' || operationType === 'replace') event.fullDocument = entry.post
    event.ns = entry.coll === undefined ? { db: entry.db } : { db: entry.db, coll: entry.coll }
    if (entry.documentKey !== undefined) event.documentKey = entry.documentKey
    if (operationType === 'update') {
      event.updateDescription = entry.updateDescription
      const after = updatedDocument(entry, spec, lookup)
      if (after !== undefined) event.fullDocument = after
    }
    if (operationType === 'update' || operationType === 'replace' || operationType === 'delete') {
      const before = documentBefore(entry, spec)
      if (before !== undefined) event.fullDocumentBeforeChange = before
    }
    events.push(event)
  }
  return events
}
