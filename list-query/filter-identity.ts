// What a cursor or a feed's token is bound to of its filter: the question, not how it was written.
// An object's members have no order (RFC 8259, 4), nor have the members of $in, $nin and $all, or
// the branches of $or, $and and $nor; a client that rebuilds its filter between pages may list
// them otherwise. The compiler writes no document as a value, where MongoDB compares key order.
import { BSON, type Document } from 'mongodb'

const SETS = new Set(['$in', '$nin', '$all', '$or', '$and', '$nor'])
const EJSON = { relaxed: false } as const

const isPlain = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object') return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** Keys in order, sets sorted by their members' text and without repeats; values (ids, dates) as they are. */
function canonical (value: unknown, key?: string): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item) => canonical(item))
    if (key === undefined || !SETS.has(key)) return items
    const byText = new Map(items.map((item) => [BSON.EJSON.stringify({ item }, EJSON), item]))
    return [...byText.keys()].sort().map((text) => byText.get(text))
  }
  if (!isPlain(value)) return value
  return Object.fromEntries(Object.keys(value).sort().map((name) => [name, canonical(value[name], name)]))
}

const texts = new WeakMap<Document, string>()

/** The filter's canonical EJSON text; kept per compiled filter, which the route keeps per query string. */
export function filterIdentity (filter: Document): string {
  let text = texts.get(filter)
  if (text === undefined) {
    text = BSON.EJSON.stringify(canonical(filter) as Document, EJSON)
    texts.set(filter, text)
  }
  return text
}
