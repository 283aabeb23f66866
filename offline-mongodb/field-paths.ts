import { isDocument } from './bson-order.js'

/**
 * The values a dotted path reaches in a document, MongoDB-style: arrays of embedded
 * documents are traversed element by element, a numeric component also indexes an array,
 * and a path that stops short yields `undefined` (missing).
 */
export function valuesAtPath (doc: unknown, parts: readonly string[]): unknown[] {
  const out: unknown[] = []
  collect(doc, parts, 0, out)
  return out
}

function collect (value: unknown, parts: readonly string[], depth: number, out: unknown[]): void {
  if (depth === parts.length) {
    out.push(value)
    return
  }
  const key = parts[depth] as string
  if (Array.isArray(value)) {
    const before = out.length
    if (/^\d+$/.test(key)) {
      const index = Number(key)
      if (index < value.length) collect(value[index], parts, depth + 1, out)
    }
    for (const element of value) {
      if (isDocument(element)) collect(element, parts, depth, out)
    }
    if (out.length === before) out.push(undefined)
    return
  }
  if (isDocument(value)) {
    collect(Object.hasOwn(value, key) ? value[key] : undefined, parts, depth + 1, out)
    return
  }
  out.push(undefined)
}

/** Candidates plus the elements of array candidates: what comparison operators look at. */
export function expandArrays (candidates: readonly unknown[]): unknown[] {
  const out: unknown[] = []
  for (const candidate of candidates) {
    if (Array.isArray(candidate)) out.push(...candidate)
    out.push(candidate)
  }
  return out
}
