// The `$changeStream` stage and the stages after it, read and checked as mongod does
// (manual: "$changeStream"; change-streams spec, "Driver API"), with mongod's error codes.
import { Timestamp } from 'bson'
import { isDocument } from './bson-order.js'
import type { Collation } from './collator.js'
import { CommandError } from './errors.js'
import type { Oplog } from './oplog.js'
import { readToken, type StreamPosition } from './resume-token.js'
import type { Doc } from './storage.js'

/** What a stream watches: one collection (db and coll), one database (db), or the cluster ({}). */
export interface Scope { db?: string, coll?: string }

export type FullDocument = 'default' | 'updateLookup' | 'whenAvailable' | 'required'
export type FullDocumentBeforeChange = 'off' | 'whenAvailable' | 'required'

export interface StreamSpec {
  scope: Scope
  /** The cursor's namespace, which getMore names: `db.coll`, or `db.$cmd.aggregate` without a collection. */
  ns: string
  fullDocument: FullDocument
  fullDocumentBeforeChange: FullDocumentBeforeChange
  /** The stages after `$changeStream`, applied to each event. */
  stages: Doc[]
  start: StreamPosition
  /** A resume token of an event, which must still be found in this stream (else error 280). */
  mustFind?: StreamPosition
  /** The aggregate's collation, for the stages (manual: "Change Streams", collation option of watch()). */
  collation?: Collation
}

const OPTIONS = new Set([
  'resumeAfter', 'startAfter', 'startAtOperationTime', 'fullDocument', 'fullDocumentBeforeChange',
  'allChangesForCluster', 'showExpandedEvents'
])
const FULL_DOCUMENT = ['default', 'updateLookup', 'whenAvailable', 'required']
const FULL_DOCUMENT_BEFORE_CHANGE = ['off', 'whenAvailable', 'required']

/** The stages a change stream allows after `$changeStream` (change-streams spec, "Helper Method"). */
const ALLOWED_STAGES = new Set([
  '$match', '$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith', '$redact'
])
/** Stages mongod knows but refuses in a change stream (IllegalOperation) rather than not knowing them. */
const KNOWN_STAGES = new Set([
  '$bucket', '$bucketAuto', '$collStats', '$count', '$currentOp', '$densify', '$documents', '$facet', '$fill',
  '$geoNear', '$graphLookup', '$group', '$indexStats', '$limit', '$listLocalSessions', '$listSessions', '$lookup',
  '$merge', '$out', '$planCacheStats', '$sample', '$search', '$searchMeta', '$setWindowFields', '$skip', '$sort',
  '$sortByCount', '$unionWith', '$unwind'
])

export function isChangeStream (pipeline: unknown): boolean {
  return Array.isArray(pipeline) && isDocument(pipeline[0]) && '$changeStream' in pipeline[0]
}

function enumOption<T extends string> (options: Doc, field: string, allowed: string[], fallback: T): T {
  const value = options[field]
  if (value === undefined) return fallback
  if (typeof value !== 'string') {
    throw new CommandError(
      14, 'TypeMismatch', `BSON field '$changeStream.${field}' is the wrong type, expected type 'string'`
    )
  }
  if (!allowed.includes(value)) {
    throw new CommandError(
      2, 'BadValue', `Enumeration value '${value}' for field '$changeStream.${field}' is not a valid value.`
    )
  }
  return value as T
}

/** Where a stream may be opened (document_source_change_stream.cpp, assertIsLegalSpecification). */
function scopeOf (db: string, aggregate: unknown, allChangesForCluster: boolean): { scope: Scope, ns: string } {
  const collectionless = aggregate === 1
  if (allChangesForCluster && !(db === 'admin' && collectionless)) {
    throw new CommandError(
      72, 'InvalidOptions',
      "A $changeStream with 'allChangesForCluster:true' may only be opened on the 'admin' database, " +
        `and with no collection name; found ${db}.${String(aggregate)}`
    )
  }
  if (db === 'admin' ? !allChangesForCluster : db === 'local' || db === 'config') {
    throw new CommandError(73, 'InvalidNamespace', `$changeStream may not be opened on the internal ${db} database`)
  }
  if (collectionless) return { scope: allChangesForCluster ? {} : { db }, ns: `${db}.$cmd.aggregate` }
  if (typeof aggregate !== 'string') {
    throw new CommandError(73, 'InvalidNamespace', `collection name has invalid type ${typeof aggregate}`)
  }
  if (aggregate.startsWith('system.')) {
    throw new CommandError(
      73, 'InvalidNamespace', `$changeStream may not be opened on the internal ${db}.${aggregate} collection`
    )
  }
  return { scope: { db, coll: aggregate }, ns: `${db}.${aggregate}` }
}

function readStages (pipeline: unknown[]): Doc[] {
  return pipeline.slice(1).map((stage) => {
    if (!isDocument(stage) || Object.keys(stage).length !== 1) {
      throw new CommandError(
        40323, 'Location40323', 'A pipeline stage specification object must contain exactly one field.'
      )
    }
    const name = Object.keys(stage)[0] as string
    if (name === '$changeStream') {
      throw new CommandError(40602, 'Location40602', '$changeStream is only valid as the first stage in a pipeline.')
    }
    if (name === '$changeStreamSplitLargeEvent') {
      throw new CommandError(2, 'BadValue', 'the offline database does not support $changeStreamSplitLargeEvent')
    }
    if (KNOWN_STAGES.has(name)) {
      throw new CommandError(20, 'IllegalOperation', `${name} is not permitted in a $changeStream pipeline`)
    }
    if (!ALLOWED_STAGES.has(name)) {
      throw new CommandError(40324, 'Location40324', `Unrecognized pipeline stage name: '${name}'`)
    }
    return stage
  })
}

export function readChangeStream (cmd: Doc, db: string, oplog: Oplog): StreamSpec {
  const pipeline = cmd.pipeline as unknown[]
  const options = (pipeline[0] as Doc).$changeStream
  if (!isDocument(options)) {
    throw new CommandError(50808, 'Location50808', '$changeStream stage expects a document as argument')
  }
  for (const key of Object.keys(options)) {
    if (!OPTIONS.has(key)) {
      throw new CommandError(40415, 'Location40415', `BSON field '$changeStream.${key}' is an unknown field.`)
    }
  }
  if (options.showExpandedEvents === true) {
    throw new CommandError(2, 'BadValue', 'the offline database does not support showExpandedEvents')
  }
  const { scope, ns } = scopeOf(db, cmd.aggregate, options.allChangesForCluster === true)
  const spec: StreamSpec = {
    scope,
    ns,
    fullDocument: enumOption(options, 'fullDocument', FULL_DOCUMENT, 'default'),
    fullDocumentBeforeChange: enumOption(options, 'fullDocumentBeforeChange', FULL_DOCUMENT_BEFORE_CHANGE, 'off'),
    stages: readStages(pipeline),
    start: { at: oplog.lastAt + 1n, seen: 0 }
  }
  if (options.resumeAfter !== undefined && options.startAfter !== undefined) {
    throw new CommandError(
      50865, 'Location50865', "Do not specify both 'resumeAfter' and 'startAfter' in a $changeStream stage"
    )
  }
  const field = options.resumeAfter !== undefined
    ? 'resumeAfter'
    : options.startAfter !== undefined ? 'startAfter' : undefined
  if (field !== undefined) {
    if (options.startAtOperationTime !== undefined) {
      throw new CommandError(
        40674, 'Location40674', 'Only one type of resume option is allowed, but multiple were found'
      )
    }
    const token = readToken(options[field], field)
    if (field === 'resumeAfter' && token.fromInvalidate) {
      throw new CommandError(
        260, 'InvalidResumeToken',
        "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification"
      )
    }
    spec.start = { at: token.at, seen: token.seen }
    if (token.seen > 0) spec.mustFind = spec.start
  } else if (options.startAtOperationTime !== undefined) {
    const time = options.startAtOperationTime
    if (!(time instanceof Timestamp)) {
      throw new CommandError(
        14, 'TypeMismatch',
        "BSON field '$changeStream.startAtOperationTime' is the wrong type, expected type 'timestamp'"
      )
    }
    spec.start = { at: time.toBigInt(), seen: 0 }
  }
  return spec
}
