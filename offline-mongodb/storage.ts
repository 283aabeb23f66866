import { randomUUID } from 'node:crypto'
import { Binary, EJSON, ObjectId } from 'bson'
import { typeRank } from './bson-order.js'
import { valuesAtPath } from './field-paths.js'
import { CommandError } from './errors.js'

export type Doc = Record<string, unknown>

export interface IndexSpec {
  v: number
  key: Record<string, number | string>
  name: string
  unique?: boolean
  [option: string]: unknown
}

/** A value's identity for unique indexes: numbers of any BSON type with one value are one key. */
export function keyPart (value: unknown): string {
  if (value === undefined || value === null) return 'null'
  const rank = typeRank(value)
  if (typeof value === 'number' || (rank === 3 && typeof value === 'object')) return `${rank}:${Number(String(value))}`
  if (value instanceof ObjectId) return `${rank}:${value.toHexString()}`
  if (value instanceof Date) return `${rank}:${value.getTime()}`
  return `${rank}:${EJSON.stringify(value as never, { relaxed: false })}`
}

function indexKey (doc: Doc, spec: IndexSpec): string {
  return Object.keys(spec.key).map((path) => keyPart(valuesAtPath(doc, path.split('.'))[0])).join('|')
}

export class Collection {
  readonly docs: Doc[] = []
  readonly indexes: IndexSpec[] = [{ v: 2, key: { _id: 1 }, name: '_id_' }]
  /** For each unique index, its keys and the document holding each. */
  private readonly uniqueKeys = new Map<string, Map<string, Doc>>([['_id_', new Map()]])
  /**
   * Whether writes keep pre- and post-images for change streams (collMod
   * `changeStreamPreAndPostImages`); on unless switched off.
   */
  recordsImages = true
  /** Each collection's own UUID, new when it is created again (listCollections' `info.uuid`). */
  readonly uuid = new Binary(Buffer.from(randomUUID().replaceAll('-', ''), 'hex'), Binary.SUBTYPE_UUID)

  constructor (readonly name: string) {}

  /** Inserts one document, giving it an `_id` first if it has none, and enforcing unique indexes. */
  insert (doc: Doc): Doc {
    // mongod stores `_id` as the first field, whatever order the client sent.
    const { _id = new ObjectId(), ...fields } = doc
    const stored: Doc = { _id, ...fields }
    const keys = this.checkUnique(stored, undefined)
    for (const [owners, key] of keys) owners.set(key, stored)
    this.docs.push(stored)
    return stored
  }

  /** Puts `next` in the place of `previous` (same `_id`), enforcing unique indexes. */
  replace (previous: Doc, next: Doc): void {
    const index = this.docs.indexOf(previous)
    if (index < 0) return
    const keys = this.checkUnique(next, previous)
    for (const spec of this.indexes) this.uniqueKeys.get(spec.name)?.delete(indexKey(previous, spec))
    for (const [owners, key] of keys) owners.set(key, next)
    this.docs[index] = next
  }

  /** The stored document with this `_id`, through the `_id` index. */
  findById (id: unknown): Doc | undefined {
    return this.uniqueKeys.get('_id_')?.get(keyPart(id))
  }

  private checkUnique (doc: Doc, replacing: Doc | undefined): Array<[Map<string, Doc>, string]> {
    const keys: Array<[Map<string, Doc>, string]> = []
    for (const spec of this.indexes) {
      const owners = this.uniqueKeys.get(spec.name)
      if (owners === undefined) continue
      const key = indexKey(doc, spec)
      const owner = owners.get(key)
      if (owner !== undefined && owner !== replacing) {
        const shown = Object.keys(spec.key).map((p) => `${p}: ${EJSON.stringify(valuesAtPath(doc, p.split('.'))[0] ?? null as never)}`).join(', ')
        throw new CommandError(11000, 'DuplicateKey', `E11000 duplicate key error collection: ${this.name} index: ${spec.name} dup key: { ${shown} }`)
      }
      keys.push([owners, key])
    }
    return keys
  }

  remove (doc: Doc): void {
    const index = this.docs.indexOf(doc)
    if (index < 0) return
    this.docs.splice(index, 1)
    for (const spec of this.indexes) this.uniqueKeys.get(spec.name)?.delete(indexKey(doc, spec))
  }

  /** Records an index; a unique one is checked against the documents already stored. */
  createIndex (spec: IndexSpec): boolean {
    const existing = this.indexes.find((i) => i.name === spec.name)
    if (existing !== undefined) {
      if (JSON.stringify(existing.key) !== JSON.stringify(spec.key) || Boolean(existing.unique) !== Boolean(spec.unique)) {
        throw new CommandError(86, 'IndexKeySpecsConflict', `An existing index has the same name as the requested index: ${spec.name}`)
      }
      return false
    }
    if (spec.unique === true) {
      const seen = new Map<string, Doc>()
      for (const doc of this.docs) {
        const key = indexKey(doc, spec)
        if (seen.has(key)) throw new CommandError(11000, 'DuplicateKey', `E11000 duplicate key error collection: ${this.name} index: ${spec.name}`)
        seen.set(key, doc)
      }
      this.uniqueKeys.set(spec.name, seen)
    }
    this.indexes.push(spec)
    return true
  }
}

export class Database {
  readonly collections = new Map<string, Collection>()

  constructor (readonly name: string) {}

  get (name: string): Collection | undefined {
    return this.collections.get(name)
  }

  getOrCreate (name: string): Collection {
    let collection = this.collections.get(name)
    if (collection === undefined) {
      if (name.length === 0 || name.includes('$') || name.includes('\0')) {
        throw new CommandError(73, 'InvalidNamespace', `Invalid collection name: ${name}`)
      }
      collection = new Collection(`${this.name}.${name}`)
      this.collections.set(name, collection)
    }
    return collection
  }
}

export class Storage {
  readonly databases = new Map<string, Database>()

  database (name: string): Database {
    let db = this.databases.get(name)
    if (db === undefined) {
      db = new Database(name)
      this.databases.set(name, db)
    }
    return db
  }
}
