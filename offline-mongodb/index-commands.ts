// createIndexes and listIndexes (manual: each command's page). Indexes are recorded, not used
// for reads (every query scans), except that unique ones are enforced, under their collation.
import { bsonTypeName, readCollation, type CollationSpec } from './collation-spec.js'
import { collationOf } from './collator.js'
import { isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import { collectionName, type Request } from './request.js'
import type { Doc, IndexSpec } from './storage.js'

/**
 * An index's `collation` as mongod stores it: the full spec with every default filled in, or
 * nothing for `{locale: "simple"}` (jstests/core/query/collation/collation.js). The field's own
 * checks are index_key_validate.cpp's.
 */
function indexCollation (spec: Doc): CollationSpec | undefined {
  const given = spec.collation
  if (given === undefined) return undefined
  if (!isDocument(given)) {
    throw new CommandError(
      14, 'TypeMismatch', `The field 'collation' must be an object, but got ${bsonTypeName(given)}`
    )
  }
  if (Object.keys(given).length === 0) {
    throw new CommandError(2, 'BadValue', "The field 'collation' cannot be an empty object.")
  }
  return readCollation(given)
}

function createIndexes (request: Request): Doc {
  const { cmd } = request
  const collection = request.state.storage.database(request.db).getOrCreate(collectionName(cmd, 'createIndexes'))
  const numIndexesBefore = collection.indexes.length
  if (!Array.isArray(cmd.indexes) || cmd.indexes.length === 0) {
    throw new CommandError(2, 'BadValue', 'Must specify at least one index to create')
  }
  for (const spec of cmd.indexes as IndexSpec[]) {
    if (!isDocument(spec.key) || Object.keys(spec.key).length === 0) {
      throw new CommandError(67, 'CannotCreateIndex', 'index key must be a non-empty object')
    }
    if (typeof spec.name !== 'string') throw new CommandError(9, 'FailedToParse', 'index name must be a string')
    const { v: _version, key, name, collation: _given, ...options } = spec
    const collation = indexCollation(spec)
    // The collation keeps its place among the options, as mongod rewrites it in place.
    const stored: IndexSpec = { v: 2, key, name }
    for (const field of Object.keys(spec)) {
      if (field === 'collation' && collation !== undefined) stored.collation = { ...collation }
      else if (Object.hasOwn(options, field)) stored[field] = options[field]
    }
    // Only a unique index compares its keys here; a collation Intl cannot give is refused then.
    collection.createIndex(stored, spec.unique === true ? collationOf(collation)?.compare : undefined)
  }
  return {
    numIndexesBefore,
    numIndexesAfter: collection.indexes.length,
    createdCollectionAutomatically: numIndexesBefore === 1 && collection.docs.length === 0,
    ok: 1
  }
}

function listIndexes (request: Request): Doc {
  const name = collectionName(request.cmd, 'listIndexes')
  const ns = `${request.db}.${name}`
  const collection = request.state.storage.database(request.db).get(name)
  if (collection === undefined) throw new CommandError(26, 'NamespaceNotFound', `ns does not exist: ${ns}`)
  return request.state.cursors.firstBatch(ns, collection.indexes.map((i) => ({ ...i })), undefined)
}

export const INDEX_COMMANDS: Record<string, (request: Request) => Doc> = { createIndexes, listIndexes }
