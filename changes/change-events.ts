// What the feed takes from a MongoDB change event: which document changed, and to which
// projects it belonged before and after the change (from the pre- and post-images). Whether
// the document is in a feed's filter is never decided here: the feed reads the changed
// documents again with its filter (readAgain in changes/feed-steps.ts), so that MongoDB decides.
import { ObjectId, type Document } from 'mongodb'

/**
 * The change-stream options every stream of the feed uses (MongoDB 6.0+): the images that say
 * to which project a changed or deleted document belonged (manual: "Change Streams with
 * Document Pre- and Post-Images"); and the primary, whatever MONGODB_URI's read preference: a
 * read is caught up against the operationTime of the member it reads, and a secondary's may stand
 * before a change the majority had committed when the request began.
 */
export const STREAM_OPTIONS = {
  fullDocument: 'whenAvailable', fullDocumentBeforeChange: 'whenAvailable', readPreference: 'primary'
} as const

/** Only what routing needs leaves the server: the images are cut to their `project`. */
export const STREAM_PIPELINE: Document[] = [{
  $project: {
    operationType: 1,
    documentKey: 1,
    clusterTime: 1,
    wallTime: 1,
    'fullDocument.project': 1,
    'fullDocumentBeforeChange.project': 1
  }
}]

/** One change, as the feed routes it. */
export interface Change {
  /** The event's resume token and its `_data`, which orders and names it in every stream of the collection. */
  token: Document
  key: string
  /** The event's operationType. */
  type: string
  /**
   * The changed document's `_id`; undefined for events about the whole collection, and for types
   * the feed does not know.
   */
  id?: unknown
  /** The projects (lower-case hex) the document belonged to before or after the change. */
  projects: string[]
  /**
   * The change cannot be routed: a deletion or update of a project's document without its
   * images (expired, or switched off), or the collection dropped or renamed. A feed that
   * crosses it has lost its history.
   */
  lost: boolean
  /** When the change was committed (ms since the epoch), for the delivery lag. */
  committedAt: number
}

/**
 * The projects an image is in, as the lists decide it: their `{ project: <ObjectId> }` matches
 * that ObjectId or an array holding it (manual: "Query an Array"), never a string of its hex.
 */
const projectKeys = (image: unknown): string[] => {
  if (image === null || typeof image !== 'object') return []
  const project = (image as Document).project
  if (project instanceof ObjectId) return [project.toHexString()]
  return Array.isArray(project)
    ? project.filter((element) => element instanceof ObjectId).map((element: ObjectId) => element.toHexString())
    : []
}

/** Whether a change names a document of `project` (any project when undefined). */
export const concerns = (change: Change, project: string | undefined): boolean =>
  change.id !== undefined && (project === undefined || change.projects.includes(project))

/** The events that end a collection's history as a stream sees it (manual: Change Events). */
const COLLECTION_ENDS = new Set(['drop', 'rename', 'dropDatabase', 'invalidate'])

/** The change an event describes; `scoped`: the collection's documents belong to projects. */
export function readChange (event: Document, scoped: boolean): Change {
  const token = event._id as Document
  const key = typeof token?._data === 'string' ? token._data : JSON.stringify(token)
  const wall = event.wallTime instanceof Date ? event.wallTime.getTime() : undefined
  const seconds = (event.clusterTime as { t?: unknown } | undefined)?.t
  const type = String(event.operationType)
  const change: Change = {
    token,
    key,
    type,
    projects: [],
    lost: false,
    committedAt: wall ?? (typeof seconds === 'number' ? seconds * 1000 : Date.now())
  }
  if (COLLECTION_ENDS.has(type)) {
    // No document to name: the copy cannot follow.
    change.lost = true
    return change
  }
  // Servers add event types, and clients must not fail on them (change-streams spec,
  // "operationType"): a type that names no change of a document is passed over (and counted).
  if (type !== 'insert' && type !== 'update' && type !== 'replace' && type !== 'delete') return change
  change.id = (event.documentKey as Document | undefined)?._id
  if (!scoped) return change
  if ((type !== 'insert' && event.fullDocumentBeforeChange == null) ||
    (type !== 'delete' && event.fullDocument == null)) {
    change.lost = true
    return change
  }
  const before = type === 'insert' ? [] : projectKeys(event.fullDocumentBeforeChange)
  const after = type === 'delete' ? [] : projectKeys(event.fullDocument)
  change.projects = [...new Set([...before, ...after])]
  return change
}

/**
 * The change-stream errors after which a token cannot be resumed (src/mongo/base/error_codes.yml,
 * src/mongo/db/pipeline/resume_token.cpp): ChangeStreamHistoryLost 286, ChangeStreamFatalError 280
 * (the token's event is not in the history), CappedPositionLost 136 (the oplog, a capped
 * collection, was overwritten under the stream), InvalidResumeToken 260, and the refusals of a
 * token MongoDB cannot read (FailedToParse 9, 40647, 40649). BadValue 2 is not one: MongoDB 5.0
 * answers it to the images the feed asks for, and relisting would not cure that.
 */
const EXPIRED_CODES = new Set([286, 280, 136, 260, 9, 40647, 40649])

export function isHistoryLost (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'number' && EXPIRED_CODES.has(code)
}

/**
 * Why the database cannot give change streams, from a server error: a standalone server (40573
 * "The $changeStream stage is only supported on replica sets"), a storage engine or deployment
 * without them (40324, CommandNotSupported 115, ChangeStreamNotEnabled 376), a user without the
 * privileges (Unauthorized 13; manual, "Change Streams", Access Control), or a server older than
 * 6.0 refusing the images (BadValue 2 or the unknown field 40415 naming `fullDocument`). The
 * version is checked before any stream opens (changes/availability.ts); the last is for a server
 * that passed it and still refuses.
 */
export function unavailableReason (error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown, message?: unknown }
  if (code === 40573) return 'the database is a standalone server: change feeds need a replica set or a sharded cluster'
  if (code === 40324 || code === 115) return 'the database does not support change streams here'
  if (code === 376) return 'change streams are not enabled on this deployment (ChangeStreamNotEnabled)'
  if (code === 13) {
    return 'the database user of the service lacks the privileges change feeds need: changeStream and find ' +
      'on the collection, and listCollections on the database (the read role has them)'
  }
  if ((code === 2 || code === 40415) && typeof message === 'string' && /fullDocument/.test(message)) {
    return 'the server refuses change stream pre- and post-images (fullDocument: "whenAvailable"): ' +
      'change feeds need MongoDB 6.0 or later'
  }
  return undefined
}

/**
 * A change no stream can ever read: an event over MongoDB's 16 MiB limit (BSONObjectTooLarge
 * 10334; the stream's $project keeps the images' `project` only, which avoids most, manual:
 * "Change Streams Production Recommendations"). Resuming from before it meets it again.
 */
const UNREADABLE_CODES = new Set([10334])

export function isUnreadable (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'number' && UNREADABLE_CODES.has(code)
}

/** Where to resume a stream: MongoDB's options for a point. */
export const resumeOptions = (point: { resumeToken: Document } | undefined): Document =>
  point === undefined ? {} : { resumeAfter: point.resumeToken }
