import { compareValues, isDocument, type StringOrder } from './bson-order.js'
import { valuesAtPath } from './field-paths.js'
import { CommandError } from './errors.js'

type Doc = Record<string, unknown>

/** Sorts below null and missing, as the manual says an empty array does. */
const EMPTY_ARRAY = Symbol('empty array')

function compareKeys (a: unknown, b: unknown, strings?: StringOrder): number {
  if (a === EMPTY_ARRAY || b === EMPTY_ARRAY) return a === b ? 0 : a === EMPTY_ARRAY ? -1 : 1
  return compareValues(a, b, strings)
}

/**
 * The value a document sorts by: ascending sorts use the smallest element of an array,
 * descending sorts the largest; a missing field sorts as null.
 */
function sortKey (doc: Doc, parts: readonly string[], direction: 1 | -1, strings?: StringOrder): unknown {
  let best: unknown
  let first = true
  for (const candidate of valuesAtPath(doc, parts)) {
    const values = Array.isArray(candidate) ? (candidate.length === 0 ? [EMPTY_ARRAY] : candidate) : [candidate ?? null]
    for (const value of values) {
      if (first || compareKeys(value, best, strings) * direction < 0) best = value
      first = false
    }
  }
  return first ? null : best
}

export type SortSpec = Array<{ parts: string[], direction: 1 | -1 }>

export function parseSort (sort: unknown): SortSpec {
  if (sort === undefined || sort === null) return []
  if (!isDocument(sort)) throw new CommandError(2, 'BadValue', 'sort must be an object')
  return Object.entries(sort).map(([path, direction]) => {
    const n = Number(direction)
    if (n !== 1 && n !== -1) {
      throw new CommandError(2, 'BadValue',
        `$sort key ordering must be 1 (for ascending) or -1 (for descending): ${path}`)
    }
    return { parts: path.split('.'), direction: n }
  })
}

/**
 * A stable sort, as mongod's results for equal keys keep their scan order. Strings (also inside
 * embedded documents and arrays) compare in `strings`' order: a collation's, else binary.
 */
export function sortDocuments (docs: Doc[], spec: SortSpec, strings?: StringOrder): Doc[] {
  if (spec.length === 0) return docs
  const keyed = docs.map((doc, index) => ({
    doc, index, keys: spec.map((s) => sortKey(doc, s.parts, s.direction, strings))
  }))
  keyed.sort((x, y) => {
    for (let i = 0; i < spec.length; i++) {
      const c = compareKeys(x.keys[i], y.keys[i], strings)
      if (c !== 0) return c * (spec[i] as SortSpec[number]).direction
    }
    return x.index - y.index
  })
  return keyed.map((k) => k.doc)
}

interface ProjectionTree { [field: string]: ProjectionTree | true }

export type Projector = (doc: Doc) => Doc

/** 1/0, true/false: an inclusion or exclusion; anything else (a string, a document) is an expression. */
function isFlag (value: unknown): boolean {
  return typeof value === 'number' || typeof value === 'boolean' ||
    (typeof value === 'object' && value !== null && '_bsontype' in value &&
      ['Long', 'Int32', 'Double', 'Decimal128'].includes(String(value._bsontype)))
}

/** Whether a projection only includes or excludes fields (no expressions to compute). */
export function isPlainProjection (projection: unknown): boolean {
  return isDocument(projection) && Object.values(projection).every(isFlag)
}

/** Inclusion or exclusion projections of plain field paths, with `_id` included by default. */
export function compileProjection (projection: unknown): Projector {
  if (projection === undefined || projection === null) return (doc) => doc
  if (!isDocument(projection)) throw new CommandError(2, 'BadValue', 'projection must be an object')
  let idIncluded = true
  const tree: ProjectionTree = {}
  let mode: boolean | undefined
  for (const [path, flag] of Object.entries(projection)) {
    if (!isFlag(flag)) {
      throw new CommandError(2, 'BadValue',
        `projection operator or expression in '${path}' is not supported by the offline database`)
    }
    const include = Boolean(typeof flag === 'object' ? Number(flag) : flag)
    if (path === '_id') {
      idIncluded = include
      continue
    }
    if (mode !== undefined && mode !== include) {
      throw new CommandError(31254, 'Location31254',
        `Cannot do ${include ? 'inclusion' : 'exclusion'} on field ${path} ` +
        `in ${include ? 'exclusion' : 'inclusion'} projection`)
    }
    mode = include
    addPath(tree, path.split('.'))
  }
  if (mode === undefined) {
    // `{}` returns whole documents; `{_id: 1}` is an inclusion of `_id` alone (manual, "Projection").
    if (!('_id' in projection)) return (doc) => doc
    return idIncluded ? (doc) => include(doc, { _id: true }) : (doc) => withoutKey(doc, '_id')
  }
  if (mode) {
    if (idIncluded) tree._id = true
    return (doc) => include(doc, tree)
  }
  if (!idIncluded) tree._id = true
  return (doc) => exclude(doc, tree)
}

function addPath (tree: ProjectionTree, parts: string[]): void {
  let node = tree
  for (let i = 0; i < parts.length; i++) {
    const key = parts[i] as string
    if (i === parts.length - 1) {
      node[key] = true
      return
    }
    const next = node[key]
    if (next === true) return
    node = node[key] = next ?? {}
  }
}

function withoutKey (doc: Doc, key: string): Doc {
  const { [key]: _removed, ...rest } = doc
  return rest
}

function include (doc: Doc, tree: ProjectionTree): Doc {
  const out: Doc = {}
  for (const [key, value] of Object.entries(doc)) {
    const rule = tree[key]
    if (rule === undefined) continue
    if (rule === true) out[key] = value
    else if (isDocument(value)) out[key] = include(value, rule)
    else if (Array.isArray(value)) out[key] = includeInArray(value, rule)
  }
  return out
}

function includeInArray (values: unknown[], tree: ProjectionTree): unknown[] {
  const out: unknown[] = []
  for (const value of values) {
    if (isDocument(value)) out.push(include(value, tree))
    else if (Array.isArray(value)) out.push(includeInArray(value, tree))
  }
  return out
}

function exclude (doc: Doc, tree: ProjectionTree): Doc {
  const out: Doc = {}
  for (const [key, value] of Object.entries(doc)) {
    const rule = tree[key]
    if (rule === true) continue
    if (rule === undefined) out[key] = value
    else if (isDocument(value)) out[key] = exclude(value, rule)
    else if (Array.isArray(value)) out[key] = value.map((v) => isDocument(v) ? exclude(v, rule) : v)
    else out[key] = value
  }
  return out
}
