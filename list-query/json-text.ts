// A strict JSON reader for `filter=`: JSON.parse keeps the last of duplicate keys silently
// and says nothing of `__proto__`, so the text is read here, with a JSON Pointer for every problem.
import { exactNumber } from './exact-number.js'
import type { FilterNode } from './filter-tree.js'
import { pointerToken, type Problems } from './problems.js'

/**
 * Keys that poison prototypes when a parsed object is merged or cloned somewhere downstream.
 * No kind has a field of these names, so they are refused as unknown fields wherever they stand:
 * `__proto__` here, before any object holds it; top-level `constructor` and `prototype` by the
 * field rules (query-spec.ts), which name the field with a "did you mean".
 */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
const forbidden = (key: string, depth: number): boolean => FORBIDDEN_KEYS.has(key) && (depth > 0 || key === '__proto__')
// No filter nests half as deep; past it, containers are read without recursion (deep()).
const MAX_DEPTH = 32

class JsonSyntaxError extends Error {
  constructor (message: string, readonly position: number) {
    super(message)
  }
}

const unexpected = (c: string | undefined, position: number): JsonSyntaxError =>
  new JsonSyntaxError(c === undefined ? 'unexpected end of text' : `unexpected character '${c}'`, position)

class Reader {
  private position = 0
  /** Keys and indexes down to the value being read; a pointer is only built for a problem. */
  private readonly path: Array<string | number> = []

  constructor (private readonly text: string, private readonly problems: Problems, private readonly param: string) {}

  read (): FilterNode | undefined {
    try {
      this.skipSpace()
      const value = this.value(0)
      this.skipSpace()
      if (this.position < this.text.length) {
        throw new JsonSyntaxError('unexpected text after the JSON value', this.position)
      }
      return value
    } catch (error) {
      if (!(error instanceof JsonSyntaxError)) throw error
      this.problems.add(
        this.param, '', 'INVALID_JSON', `filter is not valid JSON: ${error.message} at character ${error.position + 1}`
      )
      return undefined
    }
  }

  private skipSpace (): void {
    const text = this.text
    let i = this.position
    while (i < text.length) {
      const c = text.charCodeAt(i)
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
      i++
    }
    this.position = i
  }

  private pointer (): string {
    let out = ''
    for (const token of this.path) out += `/${pointerToken(token)}`
    return out
  }

  private value (depth: number): FilterNode {
    const c = this.text[this.position]
    if (depth > MAX_DEPTH && (c === '{' || c === '[')) return this.deep()
    switch (c) {
      case '{': return this.object(depth)
      case '[': return this.array(depth)
      case '"': {
        const value = this.string()
        if (!value.isWellFormed()) {
          this.problems.add(
            this.param, this.pointer(), 'INVALID_VALUE',
            'The string holds a lone surrogate (an unpaired \\ud800–\\udfff escape), which is not Unicode text'
          )
        }
        return { type: 'string', value, fromText: false }
      }
      case 't': return this.literal('true', { type: 'boolean', value: true })
      case 'f': return this.literal('false', { type: 'boolean', value: false })
      case 'n': return this.literal('null', { type: 'null' })
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number()
        throw unexpected(c, this.position)
    }
  }

  private literal (word: string, node: FilterNode): FilterNode {
    if (!this.text.startsWith(word, this.position)) {
      throw new JsonSyntaxError(`unexpected character '${this.text[this.position]}'`, this.position)
    }
    this.position += word.length
    return node
  }

  private object (depth: number): FilterNode {
    this.position++
    const entries: Array<[string, FilterNode]> = []
    this.skipSpace()
    if (this.text[this.position] === '}') {
      this.position++
      return { type: 'object', entries }
    }
    let dropped = false
    for (;;) {
      this.skipSpace()
      if (this.text[this.position] !== '"') throw new JsonSyntaxError('expected a double-quoted key', this.position)
      const key = this.string()
      this.skipSpace()
      if (this.text[this.position] !== ':') throw new JsonSyntaxError("expected ':' after a key", this.position)
      this.position++
      this.skipSpace()
      // The key is judged before its value is read, so that its problem comes first.
      const duplicate = hasKey(entries, key)
      const illFormed = !key.isWellFormed()
      const refused = forbidden(key, depth)
      const rejected = refused || duplicate || illFormed
      this.path.push(key)
      if (illFormed) {
        this.problems.add(
          this.param, this.pointer(), 'INVALID_VALUE',
          'The key holds a lone surrogate (an unpaired \\ud800–\\udfff escape), which is not Unicode text'
        )
      } else if (refused) {
        this.problems.add(
          this.param, this.pointer(), 'UNKNOWN_FIELD',
          `No field is named '${key}': the key is refused anywhere in a filter`
        )
      } else if (duplicate) {
        this.problems.add(
          this.param, this.pointer(), 'DUPLICATE_KEY', `The key '${key}' appears more than once in the same object`
        )
      }
      const value = this.value(depth + 1)
      this.path.pop()
      if (rejected) dropped = true
      else entries.push([key, value])
      this.skipSpace()
      const next = this.text[this.position++]
      if (next === '}') return dropped ? { type: 'object', entries, refused: true } : { type: 'object', entries }
      if (next !== ',') throw new JsonSyntaxError("expected ',' or '}'", this.position - 1)
    }
  }

  private array (depth: number): FilterNode {
    this.position++
    const items: FilterNode[] = []
    this.skipSpace()
    if (this.text[this.position] === ']') {
      this.position++
      return { type: 'array', items }
    }
    for (;;) {
      this.skipSpace()
      this.path.push(items.length)
      items.push(this.value(depth + 1))
      this.path.pop()
      this.skipSpace()
      const next = this.text[this.position++]
      if (next === ']') return { type: 'array', items }
      if (next !== ',') throw new JsonSyntaxError("expected ',' or ']'", this.position - 1)
    }
  }

  private number (): FilterNode {
    const text = this.numberText()
    const value = exactNumber(text)
    if (value !== undefined) return { type: 'number', value }
    this.problems.add(
      this.param, this.pointer(), 'INVALID_VALUE',
      `${text} is beyond what a number may be: numbers must be finite and within ±2^53, judged by their text`
    )
    return { type: 'number', value: Number.NaN }
  }

  private numberText (): string {
    const match = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
    match.lastIndex = this.position
    const found = match.exec(this.text)
    if (found === null) throw new JsonSyntaxError('invalid number', this.position)
    this.position += found[0].length
    return found[0]
  }

  /**
   * A container nested deeper than any filter can be: its syntax checked without recursion, its
   * content dropped. The compiler then refuses what holds it (an `$or` past the third level, an
   * array where a value belongs) with its own code and pointer, as for a shallower one.
   */
  private deep (): FilterNode {
    const text = this.text
    const outer: FilterNode = text[this.position] === '{'
      ? { type: 'object', entries: [] }
      : { type: 'array', items: [] }
    const open: string[] = []
    for (;;) {
      this.skipSpace()
      const c = text[this.position]
      if (c === '{' || c === '[') {
        this.position++
        this.skipSpace()
        if (text[this.position] !== (c === '{' ? '}' : ']')) {
          open.push(c)
          if (c === '{') this.key()
          continue
        }
        this.position++
      } else if (c === '"') {
        this.string()
      } else if (c === 't' || c === 'f' || c === 'n') {
        this.literal(c === 't' ? 'true' : c === 'f' ? 'false' : 'null', outer)
      } else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
        this.numberText()
      } else {
        throw unexpected(c, this.position)
      }
      // A value ends: close what it ends, or go on to the next item.
      for (;;) {
        if (open.length === 0) return outer
        this.skipSpace()
        const object = open[open.length - 1] === '{'
        const next = text[this.position++]
        if (next === ',') {
          if (object) this.key()
          break
        }
        if (next !== (object ? '}' : ']')) {
          throw new JsonSyntaxError(object ? "expected ',' or '}'" : "expected ',' or ']'", this.position - 1)
        }
        open.pop()
      }
    }
  }

  /** `"name":` in an object read by deep(). */
  private key (): void {
    this.skipSpace()
    if (this.text[this.position] !== '"') throw new JsonSyntaxError('expected a double-quoted key', this.position)
    this.string()
    this.skipSpace()
    if (this.text[this.position] !== ':') throw new JsonSyntaxError("expected ':' after a key", this.position)
    this.position++
  }

  private string (): string {
    const text = this.text
    let i = this.position + 1
    let out = ''
    let chunkStart = i
    for (;;) {
      if (i >= text.length) throw new JsonSyntaxError('unterminated string', this.position)
      const c = text.charCodeAt(i)
      if (c === 0x22) break
      if (c < 0x20) throw new JsonSyntaxError('control character in a string', i)
      if (c !== 0x5c) {
        i++
        continue
      }
      out += text.slice(chunkStart, i)
      const escape = text[i + 1]
      if (escape === 'u') {
        const hex = text.slice(i + 2, i + 6)
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new JsonSyntaxError('invalid \\u escape', i)
        out += String.fromCharCode(parseInt(hex, 16))
        i += 6
      } else {
        const decoded = ESCAPES[escape ?? '']
        if (decoded === undefined) throw new JsonSyntaxError('invalid escape', i)
        out += decoded
        i += 2
      }
      chunkStart = i
    }
    out += text.slice(chunkStart, i)
    this.position = i + 1
    return out
  }
}

/** Filters hold a handful of keys per object: a scan beats building a Set for each. */
function hasKey (entries: Array<[string, FilterNode]>, key: string): boolean {
  for (const entry of entries) if (entry[0] === key) return true
  return false
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }

/** Parses JSON text; problems (syntax, duplicate or forbidden keys) go to `problems`. */
export function readJson (text: string, problems: Problems, param = 'filter'): FilterNode | undefined {
  return new Reader(text, problems, param).read()
}
