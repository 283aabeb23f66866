// Every change to the stored documents goes through here, so that each one is in the oplog
// exactly once, with what its change events need: the document key, pre- and post-images and,
// for an update, the fields it changed; and, while the majority point lags, in its history.
import type { ServerState } from './server-state.js'
import type { UpdateDescription } from './oplog.js'
import type { Collection, Doc } from './storage.js'

export interface Target { state: ServerState, db: string, coll: string, collection: Collection }

export function insertDocument ({ state, db, coll, collection }: Target, doc: Doc): Doc {
  const stored = collection.insert(doc)
  const { at } = state.oplog.append({ op: 'insert', db, coll, documentKey: { _id: stored._id }, post: stored })
  state.hazards?.wrote({ at, ns: `${db}.${coll}`, after: stored })
  return stored
}

/** Stores `after` in the place of `before`: an `update` entry with its description, or a `replace`. */
export function changeDocument (
  { state, db, coll, collection }: Target, before: Doc, after: Doc, description?: UpdateDescription
): void {
  collection.replace(before, after)
  const images = collection.recordsImages
  const documentKey = { _id: after._id }
  const { at } = description === undefined
    ? state.oplog.append({ op: 'replace', db, coll, documentKey, post: after, ...(images ? { pre: before } : {}) })
    : state.oplog.append({
      op: 'update',
      db,
      coll,
      documentKey,
      updateDescription: description,
      ...(images ? { pre: before, post: after } : {})
    })
  state.hazards?.wrote({ at, ns: `${db}.${coll}`, before, after })
}

export function removeDocument ({ state, db, coll, collection }: Target, doc: Doc): void {
  const index = state.hazards === undefined ? undefined : collection.docs.indexOf(doc)
  collection.remove(doc)
  const { at } = state.oplog.append({
    op: 'delete', db, coll, documentKey: { _id: doc._id }, ...(collection.recordsImages ? { pre: doc } : {})
  })
  state.hazards?.wrote({ at, ns: `${db}.${coll}`, before: doc, index })
}

/** Drops a collection; a collection that does not exist leaves no entry, as in mongod. */
export function dropCollection (state: ServerState, db: string, coll: string): boolean {
  const { collections } = state.storage.database(db)
  const dropped = collections.get(coll)
  if (dropped === undefined) return false
  collections.delete(coll)
  const { at } = state.oplog.append({ op: 'drop', db, coll })
  state.hazards?.wrote({ at, ns: `${db}.${coll}`, docs: dropped.docs })
  return true
}

/** Drops each collection (a `drop` entry each), then the database (manual: Change Events, "dropDatabase"). */
export function dropDatabase (state: ServerState, db: string): void {
  const database = state.storage.databases.get(db)
  // A database exists while it has collections: without any, there is nothing to drop.
  if (database === undefined || database.collections.size === 0) {
    state.storage.databases.delete(db)
    return
  }
  for (const coll of [...database.collections.keys()]) dropCollection(state, db, coll)
  state.storage.databases.delete(db)
  state.oplog.append({ op: 'dropDatabase', db })
}
