// A list's counts per group as one aggregation (docs/counts.md): the list's where, the array
// unwound when the key is in one, the key (its BSON type checked, a date cut to its UTC period),
// then `$group`, the order and the limit, all in the database: only the groups asked for (and
// one more, to know whether more exist) come back.
import { ObjectId, type Document } from 'mongodb'
import { MalformedBson } from '../list-endpoint/bson-elements.js'
import type { GroupBy } from '../list-query/group-by.js'
import { MAX_NUMBER } from '../list-query/operands.js'

/**
 * The BSON types (`$type` names) a key of each kind is counted under; any other counts as no
 * value. Not a Decimal128, nor below an Int64 beyond ±2^53: the list writes neither as a JSON
 * number, and `$group` puts numerically equal values of all types in one group, keyed by
 * whichever it meets first, so such a group's value could not be written as the list writes it.
 */
const TYPES: Record<GroupBy['kind'], string[]> = {
  string: ['string'],
  number: ['double', 'int', 'long'],
  boolean: ['bool'],
  ref: ['objectId'],
  date: ['date'],
  custom: ['string', 'double', 'int', 'long', 'bool']
}

/**
 * The group's key of one document (or array element): null when missing or of a type the field
 * does not declare, or a number the list does not write as one (off-schema.ts): a double that
 * is not finite, an Int64 beyond ±2^53.
 */
function keyExpression ({ path, kind, unit }: GroupBy): Document {
  const value = `$${path}`
  // $dateTrunc (MongoDB 5.0) refuses what is not a date: the type is checked first.
  const key = unit === undefined ? value : { $dateTrunc: { date: value, unit, timezone: 'UTC' } }
  const type = { $type: value }
  const declared = { $in: [type, TYPES[kind]] }
  if (!TYPES[kind].includes('double')) return { $cond: [declared, key, null] }
  // NaN sorts below every number and ±Infinity at the ends (manual, "Comparison/Sort Order").
  const finite = { $and: [{ $gt: [value, -Infinity] }, { $lt: [value, Infinity] }] }
  const exact = { $and: [{ $gte: [value, -MAX_NUMBER] }, { $lte: [value, MAX_NUMBER] }] }
  return {
    $switch: {
      branches: [
        { case: { $eq: [type, 'double'] }, then: { $cond: [finite, key, null] } },
        { case: { $eq: [type, 'long'] }, then: { $cond: [exact, key, null] } },
        { case: declared, then: key }
      ],
      default: null
    }
  }
}

/**
 * The array unwound, as the list reads it: every element of its declared type (a document for
 * the elements of `sessionsSubscriptions`), else no value at all. `$unwind` alone would count a
 * single value stored where an array is declared as an array of it.
 */
function declaredArray ({ path, kind, unwind }: GroupBy & { unwind: string }): Document {
  const array = `$${unwind}`
  const types = unwind === path ? TYPES[kind] : ['object']
  // Nested $cond: $map is only reached with an array.
  return {
    $cond: [
      { $isArray: array },
      {
        $cond: [
          { $allElementsTrue: [{ $map: { input: array, in: { $in: [{ $type: '$$this' }, types] } } }] },
          array,
          null
        ]
      },
      null
    ]
  }
}

/** The pipeline: groups by descending count, then ascending key (null first), `limit` + 1 of them. */
export function countPipeline (where: Document, by: GroupBy, limit: number): Document[] {
  return [
    { $match: where },
    // Each element is counted: an empty or missing array, one document without a value.
    ...(by.unwind === undefined
      ? []
      : [
          { $set: { [by.unwind]: declaredArray({ ...by, unwind: by.unwind }) } },
          { $unwind: { path: `$${by.unwind}`, preserveNullAndEmptyArrays: true } }
        ]),
    { $group: { _id: keyExpression(by), count: { $sum: 1 } } },
    { $sort: { count: -1, _id: 1 } },
    { $limit: limit + 1 }
  ]
}

export interface Group { value: string | number | boolean | null, count: number }

/** A key as a list writes it: ObjectIds as hex, dates as ISO 8601 with milliseconds, numbers as numbers. */
function valueOf (key: unknown): Group['value'] {
  if (key === null || key === undefined) return null
  if (key instanceof ObjectId) return key.toHexString()
  if (key instanceof Date) return key.toISOString()
  if (typeof key === 'string' || typeof key === 'number' || typeof key === 'boolean') return key
  return null
}

/** The answer's groups from the aggregation's documents, at most `limit`, and whether more were left out. */
export function groupsOf (documents: Document[], limit: number): { groups: Group[], more: boolean } {
  const groups = documents.slice(0, limit).map((document) => {
    const count = Number(document.count)
    // A group without its count came damaged (503): never a NaN for the serializer to refuse.
    if (!Number.isSafeInteger(count) || count < 1) throw new MalformedBson('a group holds no count')
    return { value: valueOf(document._id), count }
  })
  return { groups, more: documents.length > limit }
}
