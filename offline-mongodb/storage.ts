import { randomUUID } from 'node:crypto'
import { Binary, EJSON, ObjectId } from 'bson'
import { isDocument, typeRank, type StringOrder } from './bson-order.js'
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

/**
 * The strings of a unique index with a collation: each string met stands for every string the
 * collation calls equal to it, so that keys equal under the collation are one key, as in mongod's
 * collated index (manual: "Collation", unique indexes).
 */
class Representatives {
  private readonly seen: string[] = []

  constructor (private readonly strings: StringOrder) {}

  of (value: unknown): unknown {
    if (typeof value === 'string') {
      const found = this.seen.find((known) => this.strings(known, value) === 0)
      if (found !== undefined) return found
      this.seen.push(value)
      return value
    }
    if (Array.isArray(value)) return value.map((v) => this.of(v))
    if (isDocument(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.of(v)]))
    return value
  }
}

function indexKey (doc: Doc, spec: IndexSpec, representatives?: Representatives): string {
  return Object.keys(spec.key).map((path) => {
    const value = valuesAtPath(doc, path.split('.'))[0]
    return keyPart(representatives === undefined ? value : representatives.of(value))
  }).join('|')
}

export class Collection {
  readonly docs: Doc[] = []
  readonly indexes: IndexSpec[] = [{ v: 2, key: { _id: 1 }, name: '_id_' }]
  /** For each unique index, its keys and the document holding each. */
  private readonly uniqueKeys = new Map<string, Map<string, Doc>>([['_id_', new Map()]])
  /** For each unique index with a collation, the strings standing for their equals. */
  private readonly representatives = new Map<string, Representatives>()
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
    for (const spec of this.indexes) this.uniqueKeys.get(spec.name)?.delete(this.keyOf(previous, spec))
    for (const [owners, key] of keys) owners.set(key, next)
    this.docs[index] = next
  }

  /** The stored document with this `_id`, through the `_id` index. */
  findById (id: unknown): Doc | undefined {
    return this.uniqueKeys.get('_id_')?.get(keyPart(id))
  }

  private keyOf (doc: Doc, spec: IndexSpec): string {
    return indexKey(doc, spec, this.representatives.get(spec.name))
  }

  private checkUnique (doc: Doc, replacing: Doc | undefined): Array<[Map<string, Doc>, string]> {
    const keys: Array<[Map<string, Doc>, string]> = []
    for (const spec of this.indexes) {
      const owners = this.uniqueKeys.get(spec.name)
      if (owners === undefined) continue
      const key = this.keyOf(doc, spec)
      const owner = owners.get(key)
      if (owner !== undefined && owner !== replacing) {
        const shown = Object.keys(spec.key)
          .map((p) => `${p}: ${EJSON.stringify(valuesAtPath(doc, p.split('.'))[0] ?? null as never)}`).join(', ')
        const collation = spec.collation === undefined ? '' : ` collation: ${EJSON.stringify(spec.collation as never)}`
        throw new CommandError(11000, 'DuplicateKey', `E11000 duplicate key error collection: ${this.name} ` +
          `index: ${spec.name}${collation} dup key: { ${shown} }`)
      }
      keys.push([owners, key])
    }
    return keys
  }

  remove (doc: Doc): void {
    const index = this.docs.indexOf(doc)
    if (index < 0) return
    this.docs.splice(index, 1)
    for (const spec of this.indexes) this.uniqueKeys.get(spec.name)?.delete(this.keyOf(doc, spec))
  }

  /**
   * Records an index; a unique one is checked against the documents already stored, its string
   * keys compared with `strings` when the index has a collation.
   */
  createIndex (spec: IndexSpec, strings?: StringOrder): boolean {
    const existing = this.indexes.find((i) => i.name === spec.name)
    if (existing !== undefined) {
      if (JSON.stringify(existing.key) !== JSON.stringify(spec.key) ||
        Boolean(existing.unique) !== Boolean(spec.unique)) {
        throw new CommandError(86, 'IndexKeySpecsConflict',
          `An existing index has the same name as the requested index: ${spec.name}`)
      }
      if (JSON.stringify(existing.collation) !== JSON.stringify(spec.collation)) {
        throw new CommandError(85, 'IndexOptionsConflict',
          `An existing index has the same name as the requested index: ${spec.name}`)
      }
      return false
    }
    if (spec.unique === true) {
      const representatives = strings === undefined ? undefined : new Representatives(strings)
      const seen = new Map<string, Doc>()
      for (const doc of this.docs) {
        const key = indexKey(doc, spec, representatives)
        if (seen.has(key)) {
          throw new CommandError(11000, 'DuplicateKey',
            `E11000 duplicate key error collection: ${this.name} index: ${spec.name}`)
        }
        seen.set(key, doc)
      }
      this.uniqueKeys.set(spec.name, seen)
      if (representatives !== undefined) this.representatives.set(spec.name, representatives)
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
