// Aggregation expressions the stand-in computes itself, where mingo's answer is not mongod's:
// `$type` (mingo names an ObjectId "objectid" and knows no BSON number types), `$dateTrunc`
// (mingo refuses the time zone "UTC"), and `$gt`, `$gte`, `$lt`, `$lte` (mingo orders values of
// two types as JavaScript does: "a" > -Infinity is false, where a string sorts after every
// number). Manual: aggregation/type/, aggregation/dateTrunc/, bson-type-comparison-order/.
import { evalExpr } from 'mingo/core'
import type { Any, AnyObject, Options } from 'mingo/types'
import { compareValues, isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import { bsonTypeName } from './query-types.js'

/** `{$type: <expression>}`: the BSON type's name, "missing" for a missing field. */
function $type (obj: AnyObject, expr: Any, options: Options): string {
  const value: unknown = evalExpr(obj, Array.isArray(expr) && expr.length === 1 ? expr[0] : expr, options)
  return value === undefined ? 'missing' : bsonTypeName(value)
}

const UNITS = ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'millisecond'] as const

/**
 * `{$dateTrunc: {date, unit, binSize?, timezone?}}` in UTC (the only time zone the stand-in
 * takes: "UTC", "GMT", "Z" or "+00:00"), for binSize 1; weeks start on Sunday, as by default.
 */
function $dateTrunc (obj: AnyObject, expr: Any, options: Options): Date | null {
  if (!isDocument(expr)) {
    throw new CommandError(5439007, 'Location5439007', '$dateTrunc only supports an object as its argument')
  }
  const args = Object.fromEntries(
    Object.entries(expr).map(([key, value]) => [key, evalExpr(obj, value as Any, options) as unknown])
  )
  const { date, unit, binSize = 1, timezone = 'UTC' } = args
  if (date === null || date === undefined || unit === null || unit === undefined) return null
  if (!(date instanceof Date)) {
    throw new CommandError(
      5439012, 'Location5439012', `$dateTrunc requires 'date' to be a date, but got ${bsonTypeName(date)}`
    )
  }
  if (typeof unit !== 'string' || !(UNITS as readonly string[]).includes(unit)) {
    throw new CommandError(
      5439014, 'Location5439014',
      `$dateTrunc parameter 'unit' value cannot be recognized as a time unit: ${String(unit)}`
    )
  }
  if (binSize !== 1) {
    throw new CommandError(2, 'BadValue', 'the offline database supports $dateTrunc with binSize 1 only')
  }
  if (!['UTC', 'GMT', 'Z', '+00:00', '+0000'].includes(String(timezone))) {
    throw new CommandError(2, 'BadValue', 'the offline database supports $dateTrunc in UTC only')
  }
  const d = new Date(date.getTime())
  switch (unit) {
    case 'year': return new Date(Date.UTC(d.getUTCFullYear(), 0, 1))
    case 'quarter': return new Date(Date.UTC(d.getUTCFullYear(), Math.floor(d.getUTCMonth() / 3) * 3, 1))
    case 'month': return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1))
    case 'week': return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - d.getUTCDay()))
    case 'day': return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()))
    case 'hour': return new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000)
    case 'minute': return new Date(Math.floor(d.getTime() / 60_000) * 60_000)
    case 'second': return new Date(Math.floor(d.getTime() / 1000) * 1000)
    default: return d
  }
}

/**
 * An order of two values in BSON's comparison order (strings in binary: under a collation, pipeline-collation.ts
 * refuses two strings).
 */
function ordered (holds: (order: number) => boolean) {
  return (obj: AnyObject, expr: Any, options: Options): boolean => {
    const operands: unknown = evalExpr(obj, expr, options)
    if (!Array.isArray(operands) || operands.length !== 2) {
      throw new CommandError(16020, 'Location16020', 'Expression takes exactly 2 arguments.')
    }
    return holds(compareValues(operands[0], operands[1]))
  }
}

export const EXPRESSION_OPERATORS = {
  $type,
  $dateTrunc,
  $gt: ordered((order) => order > 0),
  $gte: ordered((order) => order >= 0),
  $lt: ordered((order) => order < 0),
  $lte: ordered((order) => order <= 0)
}
