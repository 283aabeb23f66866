// The document an upsert inserts: "the update creates a base document from the equality clauses
// in the <query> parameter, and then applies the expressions from the <update> parameter"
// (manual: "update", Upsert Behavior).
import { ObjectId, type Timestamp } from 'bson'
import { isDocument } from './bson-order.js'
import type { Doc } from './storage.js'
import { applyOperators, applyReplacement, isOperatorUpdate } from './update-operators.js'
import { cloneDeep, parseUpdatePath, setAt } from './update-paths.js'

/** The equality clauses of a query, `{ a: 1 }`, `{ a: { $eq: 1 } }` and inside `$and`, as a document. */
function equalities (query: Doc, into: Doc): void {
  for (const [key, value] of Object.entries(query)) {
    if (key === '$and' && Array.isArray(value)) {
      for (const clause of value) if (isDocument(clause)) equalities(clause, into)
      continue
    }
    if (key.startsWith('$')) continue
    const operators = isDocument(value) && Object.keys(value).some((k) => k.startsWith('$'))
    if (operators && Object.keys(value).length === 1 && '$eq' in value) {
      setAt(into, parseUpdatePath(key), cloneDeep(value.$eq))
    } else if (!operators &&
      !(value !== null && typeof value === 'object' && (value as { _bsontype?: string })._bsontype === 'BSONRegExp')) {
      setAt(into, parseUpdatePath(key), cloneDeep(value))
    }
  }
}

/** `_id` first, as mongod stores it; one is made when neither query nor update gave one. */
function withId (doc: Doc): Doc {
  const { _id = new ObjectId(), ...fields } = doc
  return { _id, ...fields }
}

export function upsertDocument (query: Doc, update: Doc, now: () => Timestamp): Doc {
  const base: Doc = {}
  equalities(query, base)
  if (isOperatorUpdate(update)) return withId(applyOperators(base, update, { inserting: true, now }).doc)
  // Of the query, a replacement keeps only the `_id`, when it has none of its own.
  return withId(applyReplacement({ _id: '_id' in update ? update._id : base._id }, update).doc)
}
