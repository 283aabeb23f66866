// MongoDB's query semantics, plugged into mingo as its query operators. Stock mingo
// differs from MongoDB on type bracketing, $all against scalars, Long/Decimal128 numbers,
// $type and embedded-document equality; every operator the driver can send is defined here
// (query-predicates.ts), once per collation: its string order is part of each operator.
import { BSONRegExp } from 'bson'
import { Context } from 'mingo'
import * as accumulatorOperators from 'mingo/operators/accumulator'
import * as expressionOperators from 'mingo/operators/expression'
import * as pipelineOperators from 'mingo/operators/pipeline'
import * as projectionOperators from 'mingo/operators/projection'
import * as queryOperators from 'mingo/operators/query'
import * as windowOperators from 'mingo/operators/window'
import { $and, $nor, $or } from 'mingo/operators/query/logical'
import { Query } from 'mingo/query'
import { isDocument } from './bson-order.js'
import type { Collation } from './collator.js'
import { valuesAtPath } from './field-paths.js'
import { PREDICATES, type Predicate, type PredicateEnv } from './query-predicates.js'
import { compilePattern, fromBSONRegExp } from './regex.js'
import { CommandError } from './errors.js'
import { EXPRESSION_OPERATORS } from './expression-operators.js'

function asMingoOperator (build: (operand: unknown, env: PredicateEnv) => Predicate, env: PredicateEnv) {
  return (selector: string, operand: unknown) => {
    const parts = selector.split('.')
    const test = build(operand, env)
    return (doc: unknown) => test(valuesAtPath(doc, parts))
  }
}

type Logical = typeof $and

/**
 * `$and`, `$or` and `$nor` take a non-empty array of documents (mongod's MatchExpressionParser:
 * BadValue "$and/$or/$nor must be a nonempty array", "$or/$and/$nor entries need to be full
 * objects"; manual: $and, $or, $nor). Stock mingo takes `$or: []` as matching nothing and `$and: []`
 * as matching everything.
 */
function nonEmpty (logical: Logical): Logical {
  return (selector, operand, options) => {
    if (!Array.isArray(operand) || operand.length === 0) {
      throw new CommandError(2, 'BadValue', '$and/$or/$nor must be a nonempty array')
    }
    if (!operand.every(isDocument)) {
      throw new CommandError(2, 'BadValue', '$or/$and/$nor entries need to be full objects')
    }
    return logical(selector, operand, options)
  }
}

/** The query operators of one collation (undefined: binary string comparison). */
function makeContext (collation: Collation | undefined): Context {
  const env: PredicateEnv = {
    strings: collation?.compare,
    // $elemMatch's object form: a query of its own, with the same operators.
    subQuery: (criteria) => {
      const query = new Query(criteria, { context, scriptEnabled: false })
      return (doc) => query.test(doc)
    }
  }
  // mingo's own context lets its operators win over a caller's (Context.from), so the stand-in's
  // is whole: mingo's operators with the stand-in's in their place, for AggregatorBase.
  const context: Context = Context.init({
    accumulator: accumulatorOperators,
    expression: { ...expressionOperators, ...EXPRESSION_OPERATORS },
    pipeline: pipelineOperators,
    projection: projectionOperators,
    window: windowOperators,
    query: {
      ...queryOperators,
      ...Object.fromEntries(Object.entries(PREDICATES).map(([name, build]) => [name, asMingoOperator(build, env)])),
      $and: nonEmpty($and),
      $or: nonEmpty($or),
      $nor: nonEmpty($nor)
    }
  })
  return context
}

/** The operators with binary string comparison, for the stages mingo runs. */
export const queryContext = makeContext(undefined)
const contexts = new WeakMap<Collation, Context>()

function contextOf (collation: Collation | undefined): Context {
  if (collation === undefined) return queryContext
  let context = contexts.get(collation)
  if (context === undefined) {
    context = makeContext(collation)
    contexts.set(collation, context)
  }
  return context
}

/**
 * BSON regular expressions and `$regex`/`$options` pairs are compiled once (regex.ts), before
 * mingo sees the filter, so that every operator receives a ready Pcre2Pattern.
 */
export function prepareFilter (value: unknown): unknown {
  if (value instanceof BSONRegExp) return fromBSONRegExp(value)
  if (Array.isArray(value)) return value.map(prepareFilter)
  if (!isDocument(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$options') continue
    if (key === '$regex') {
      const options = typeof value.$options === 'string' ? value.$options : ''
      out.$pcre = inner instanceof BSONRegExp
        ? compilePattern(inner.pattern, options || inner.options)
        : typeof inner === 'string' ? compilePattern(inner, options) : inner
      continue
    }
    // A regex as a field's value means "matches": mingo would read the pattern object as a document.
    out[key] = inner instanceof BSONRegExp && !key.startsWith('$')
      ? { $pcre: fromBSONRegExp(inner) }
      : prepareFilter(inner)
  }
  if ('$options' in value && !('$regex' in value)) throw new CommandError(2, 'BadValue', '$options needs a $regex')
  return out
}

export type DocumentTest = (doc: Record<string, unknown>) => boolean

/** Compiles a MongoDB filter into a document predicate, with MongoDB's error codes, under a collation if given. */
export function compileFilter (filter: unknown, collation?: Collation): DocumentTest {
  if (filter === undefined || filter === null) return () => true
  if (!isDocument(filter)) throw new CommandError(2, 'BadValue', 'filter must be an object')
  try {
    const query = new Query(
      prepareFilter(filter) as Record<string, unknown>, { context: contextOf(collation), scriptEnabled: false }
    )
    return (doc) => query.test(doc)
  } catch (error) {
    if (error instanceof CommandError) throw error
    const message = error instanceof Error ? error.message : String(error)
    if (message.includes('$where')) throw new CommandError(2, 'BadValue', '$where is not allowed in this context')
    const unknown = /unknown (?:top level |query )?operator:? (\S+)/.exec(message)
    throw new CommandError(2, 'BadValue', unknown ? `unknown operator: ${unknown[1]}` : message)
  }
}
