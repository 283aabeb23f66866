// The shape of one update operator (update-operators.ts applies them): what it is given, and the
// change it reports for the update description.
import { EJSON, type Timestamp } from 'bson'
import { isDocument } from './bson-order.js'
import type { Doc } from './storage.js'
import { getAt, setAt } from './update-paths.js'

export interface UpdateContext {
  /** An upsert inserting: `$setOnInsert` applies (manual: "$setOnInsert"). */
  inserting: boolean
  /** The time `$currentDate` gives a Timestamp field. */
  now: () => Timestamp
}

export interface Action { op: string, parts: string[], operand: unknown, target?: string[] }

export function typeName (value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'double'
  if (typeof value === 'string') return 'string'
  if (typeof value === 'boolean') return 'bool'
  if (value instanceof Date) return 'date'
  if (isDocument(value)) return 'object'
  return (value as { _bsontype?: string })._bsontype?.toLowerCase() ?? typeof value
}

export const shown = (value: unknown): string => EJSON.stringify(value as never, { relaxed: true })

/** What one operator did, for the update description: fields set (path → value) and removed. */
export interface Change { set: Array<[string[], unknown]>, removed: string[][] }

export type Apply = (doc: Doc, action: Action, context: UpdateContext) => Change | undefined

export const none = (): Change => ({ set: [], removed: [] })
export const setField = (doc: Doc, parts: string[], value: unknown): Change => {
  const reported = setAt(doc, parts, value)
  return { set: [[reported, getAt(doc, reported)]], removed: [] }
}
