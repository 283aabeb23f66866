// Dotted paths as update operators walk them (manual: "Dot Notation"): a numeric component
// indexes an array, missing embedded documents are created on the way, and setting past the end
// of an array pads it with nulls. Unlike query paths, they never fan out over array elements.
import { EJSON, serialize } from 'bson'
import { isDocument } from './bson-order.js'
import { CommandError } from './errors.js'
import type { Doc } from './storage.js'

type Container = Doc | unknown[]

const NUMERIC = /^\d+$/

/** The components of an update path; empty ones and the positional operators are refused. */
export function parseUpdatePath (path: string): string[] {
  const parts = path.split('.')
  if (parts.some((part) => part.length === 0)) {
    throw new CommandError(56, 'EmptyFieldName',
      `The update path '${path}' contains an empty field name, which is not allowed.`)
  }
  if (parts.some((part) => part === '$' || /^\$\[.*\]$/.test(part))) {
    throw new CommandError(2, 'BadValue',
      `the offline database does not support the positional operators ($, $[], $[<identifier>]): '${path}'`)
  }
  return parts
}

/** A copy of the plain documents and arrays in `value`; BSON values are immutable and shared. */
export function cloneDeep<T> (value: T): T {
  if (Array.isArray(value)) return value.map(cloneDeep) as T
  if (!isDocument(value)) return value
  const out: Doc = {}
  for (const [key, inner] of Object.entries(value)) setOwn(out, key, cloneDeep(inner))
  return out as T
}

/** `obj[key] = value`, also for a key named `__proto__` (a field name like any other in BSON). */
export function setOwn (obj: Doc, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    obj[key] = value
  }
}

function child (node: unknown, key: string): unknown {
  if (Array.isArray(node)) return NUMERIC.test(key) ? node[Number(key)] : undefined
  if (isDocument(node)) return Object.hasOwn(node, key) ? node[key] : undefined
  return undefined
}

/** The value at a path, or undefined when the path does not reach one. */
export function getAt (doc: Doc, parts: readonly string[]): unknown {
  let node: unknown = doc
  for (const part of parts) {
    node = child(node, part)
    if (node === undefined) return undefined
  }
  return node
}

/** Whether walking the path goes through an array (where $rename refuses to go). */
export function crossesArray (doc: Doc, parts: readonly string[]): boolean {
  let node: unknown = doc
  for (const part of parts.slice(0, -1)) {
    node = child(node, part)
    if (Array.isArray(node)) return true
    if (node === undefined) return false
  }
  return false
}

function notViable (key: string, holder: string, value: unknown): CommandError {
  return new CommandError(28, 'PathNotViable',
    `Cannot create field '${key}' in element {${holder}: ${EJSON.stringify(value as never, { relaxed: true })}}`)
}

/** Puts a value under a key of a document or an index of an array; true when an array was padded. */
function put (node: Container, key: string, value: unknown, holder: string): boolean {
  if (!Array.isArray(node)) {
    setOwn(node, key, value)
    return false
  }
  if (!NUMERIC.test(key)) throw notViable(key, holder, node)
  const index = Number(key)
  const padded = index > node.length
  while (node.length < index) node.push(null)
  node[index] = value
  return padded
}

/**
 * Sets the value at a path, creating what is missing on the way. Returns the path whose new
 * value a change event reports: the first component created, the array when it was padded, or
 * the whole path.
 */
export function setAt (doc: Doc, parts: readonly string[], value: unknown): string[] {
  let node: Container = doc
  let holder = ''
  for (let i = 0; i < parts.length - 1; i++) {
    const key = parts[i] as string
    const next = child(node, key)
    if (next === undefined) {
      let created: unknown = value
      for (let j = parts.length - 1; j > i; j--) {
        const nested: Doc = {}
        setOwn(nested, parts[j] as string, created)
        created = nested
      }
      return put(node, key, created, holder) ? parts.slice(0, i) : parts.slice(0, i + 1)
    }
    if (!isDocument(next) && !Array.isArray(next)) throw notViable(parts[i + 1] as string, key, next)
    node = next
    holder = key
  }
  return put(node, parts[parts.length - 1] as string, value, holder) ? parts.slice(0, -1) : [...parts]
}

/**
 * Removes the field at a path; an array element becomes null instead, as `$unset` does
 * (manual: "$unset"). Says which happened, if anything.
 */
export function unsetAt (doc: Doc, parts: readonly string[]): 'removed' | 'nulled' | 'none' {
  const parent = parts.length === 1 ? doc : getAt(doc, parts.slice(0, -1))
  const key = parts[parts.length - 1] as string
  if (Array.isArray(parent)) {
    if (!NUMERIC.test(key) || Number(key) >= parent.length) return 'none'
    parent[Number(key)] = null
    return 'nulled'
  }
  if (!isDocument(parent) || !Object.hasOwn(parent, key)) return 'none'
  delete parent[key]
  return 'removed'
}

/** Equality of two values as stored: same BSON type and bytes (missing equals only missing). */
export function bsonEqual (a: unknown, b: unknown): boolean {
  if (a === b) return a !== 0 || Object.is(a, b)
  if (a === undefined || b === undefined || a === null || b === null) return false
  if (typeof a !== 'object' && typeof b !== 'object') return Object.is(a, b)
  return Buffer.compare(serialize({ v: a }), serialize({ v: b })) === 0
}

/** Orders update paths as mongod applies them: numeric components as numbers, others as strings. */
export function comparePaths (a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string
    const y = b[i] as string
    if (x === y) continue
    if (NUMERIC.test(x) && NUMERIC.test(y)) return Number(x) - Number(y)
    return x < y ? -1 : 1
  }
  return a.length - b.length
}
