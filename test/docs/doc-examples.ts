// Reading the shell examples out of the user-facing Markdown (docs/architecture.md, "How the docs'
// examples are run", says what an example is and what is asserted of it).
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import { makeKey, mint } from '../helpers/tokens.js'

const ROOT = path.join(import.meta.dirname, '..', '..')

/** The origin the docs write for `npm start`. */
export const DOCS_ORIGIN = /http:\/\/(?:127\.0\.0\.1|localhost):3000(?![0-9])/g

export interface Expectation {
  /** An exact status; undefined: any 2xx. */
  status?: number
  code?: string
  errors?: Array<{ param: unknown, pointer: unknown, code: unknown }>
  /** Where the expectation was read. */
  from: string
}

export interface Example {
  doc: string
  line: number
  /** The command (or the script) as the doc writes it. */
  text: string
  /** What runs before it: the doc's assignments so far (and a minted token). */
  setup: string[]
  expect: Expectation
  /** A stream or an endless loop: cut after a bounded time. */
  endless: boolean
  /** Runs against the service with AUTH_MODE=jwt. */
  auth: boolean
  /** Its standard output is the answer's body. */
  printsBody: boolean
  /** What the doc says it prints ("run against `npm start`: `5 pages, 1000 documents`"). */
  prints?: string
}

interface Item { kind: 'block' | 'span', lang: string, text: string, line: number, end: number }

export const key = makeKey('docs', 'ES256')

// ---------------------------------------------------------------------------------------------
// Reading the Markdown

/** Fenced blocks and inline code spans, in document order (lines 1-based). */
function items (markdown: string): Item[] {
  const lines = markdown.split('\n')
  const found: Item[] = []
  const prose: string[] = []
  let fence: { marker: string, indent: number, lang: string, line: number, body: string[] } | undefined
  for (const [index, line] of lines.entries()) {
    if (fence === undefined) {
      const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(line)
      if (open !== null) {
        fence = {
          marker: open[2] as string,
          indent: (open[1] as string).length,
          lang: (open[3] as string).toLowerCase(),
          line: index + 1,
          body: []
        }
        prose.push('')
      } else prose.push(line)
      continue
    }
    prose.push('')
    if (line.trim().startsWith(fence.marker) && line.trim().replace(/[`~]/g, '') === '') {
      found.push({ kind: 'block', lang: fence.lang, text: fence.body.join('\n'), line: fence.line, end: index + 1 })
      fence = undefined
    } else fence.body.push(line.slice(Math.min(fence.indent, /^\s*/.exec(line)?.[0].length ?? 0)))
  }
  // Code spans of the prose (blocks blanked out, line numbers kept); a span never crosses a blank line.
  const text = prose.join('\n')
  for (const match of text.matchAll(/`((?:[^`\n]|\n(?!\s*\n))+)`/g)) {
    const line = text.slice(0, match.index).split('\n').length
    found.push({
      kind: 'span',
      lang: '',
      text: (match[1] as string).replace(/\s*\n\s*/g, ' ').replaceAll('\\|', '|'),
      line,
      end: line
    })
  }
  return found.sort((a, b) => a.line - b.line)
}

/** The text with quoted parts emptied and comments removed: what the shell parses as operators. */
export function unquoted (text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (c === '\\') { i++; out += '_'; continue }
    if (c === "'") { i = text.indexOf("'", i + 1); if (i < 0) break; out += "''"; continue }
    if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      out += text.slice(i, j + 1).includes('$(') ? '"$("' : '""'
      i = j
      continue
    }
    if (c === '#' && (i === 0 || /\s/.test(text[i - 1] as string))) {
      // A comment runs to the end of its line: a script's next lines are still code.
      const end = text.indexOf('\n', i)
      if (end < 0) break
      i = end - 1
      continue
    }
    out += c
  }
  return out
}

/** Words of a short shell text (quotes removed), for the token command's options. */
function words (text: string): string[] {
  return [...text.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3] as string)
}

const COMPOUND = /^\s*(?:while|until|for|if|case|select)\b/
const CLOSER = /(?:^|;)\s*(?:done|fi|esac)\b/g
const OPENER = /^\s*(?:while|until|for|if|case|select)\b/
const ASSIGNMENT = /^(?:export\s+)?([A-Za-z_]\w*)=(?:\$\(.*\)|'[^']*'|"[^"]*"|[^\s'"]*)\s*(?:#.*)?$/s
const TOKEN = /^eval\s+"\$\(npm run (?:-s )?token -- (.*)\)"\s*(?:#.*)?$/
const START = /^npm start\s*(?:#.*)?$/
const STATUS_COMMENT = /\s#\s*(\d{3})(?:\s+([A-Z][A-Z0-9_]+))?\s*$/

const hasCurl = (text: string): boolean => /(?:^|[\s;|&(`])curl\s/.test(unquoted(text))

/** The block's commands: continuation lines joined, compound commands whole, comments and blank lines dropped. */
function statements (block: string, firstLine: number): Array<{ text: string, line: number }> {
  const result: Array<{ text: string, line: number }> = []
  let current: string[] = []
  let start = 0
  let depth = 0
  const lines = block.split('\n')
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] as string
    const at = i
    while (line.endsWith('\\') && i + 1 < lines.length) line += '\n' + (lines[++i] as string)
    if (current.length === 0 && (line.trim() === '' || line.trim().startsWith('#'))) continue
    if (current.length === 0) start = at
    current.push(line)
    const code = unquoted(line)
    if (OPENER.test(code)) depth++
    depth -= [...code.matchAll(CLOSER)].length
    if (depth <= 0) {
      result.push({ text: current.join('\n'), line: firstLine + 1 + start })
      current = []
      depth = 0
    }
  }
  if (current.length > 0) result.push({ text: current.join('\n'), line: firstLine + 1 + start })
  return result
}

/** `eval "$(npm run -s token -- --projects … [--ttl …] [--sub …])"`, as a TOKEN that the JWT service accepts. */
function tokenSetup (options: string): string {
  const args = words(options)
  const value = (name: string): string | undefined => args[args.indexOf(name) + 1] ?? undefined
  const projects = value('--projects')
  if (projects === undefined) throw new Error(`npm run token without --projects: ${options}`)
  const ttl = /^(\d+)([smhd]?)$/.exec(value('--ttl') ?? '1h')
  const seconds = ttl === null
    ? 3600
    : Number(ttl[1]) * ({ '': 1, s: 1, m: 60, h: 3600, d: 86400 }[ttl[2] as string] ?? 1)
  const token = mint(key, {
    projects: projects === '*' ? '*' : projects.split(','), sub: value('--sub') ?? 'developer'
  }, { expiresIn: seconds * 1000 })
  return `export TOKEN='${token}'   # npm run token -- ${options}`
}

/** The answer a ```json block shows, when it shows one with a status. */
function shownAnswer (json: string, from: string): Expectation | undefined {
  try {
    const body = JSON.parse(json) as { status?: unknown, code?: unknown, errors?: unknown }
    if (typeof body.status !== 'number') return undefined
    const errors = Array.isArray(body.errors)
      ? (body.errors as Array<Record<string, unknown>>).map(({ param, pointer, code }) => ({ param, pointer, code }))
      : undefined
    return { status: body.status, code: typeof body.code === 'string' ? body.code : undefined, errors, from }
  } catch {
    const status = /"status"\s*:\s*(\d{3})/.exec(json)
    const code = /"code"\s*:\s*"([A-Z_]+)"/.exec(json)
    return status === null ? undefined : { status: Number(status[1]), code: code?.[1], from }
  }
}

/**
 * Its output is the body: one curl, no pipe, list, redirection or substitution, no option that prints something else.
 */
function printsBody (text: string): boolean {
  const code = unquoted(text)
  if (/[|;&<>`]|\$\(/.test(code) || COMPOUND.test(code)) return false
  return !/(?:^|\s)(?:-[a-zA-Z]*[iIoODwv][a-zA-Z]*|--(?:include|head|output|remote-name|dump-header|write-out|verbose|trace\S*))(?=\s|$)/.test(code)
}

const isEndless = (text: string): boolean => {
  const code = unquoted(text)
  return /(?:^|\s)-[a-zA-Z]*N[a-zA-Z]*(?=\s|$)|--no-buffer/.test(code) || /\bwhile\s+(?::|true)\s*;/.test(code) ||
    /application\/x-ndjson/.test(text)
}

export function extract (doc: string, markdown: string): Example[] {
  const found = items(markdown)
  const shell = (item: Item) => item.kind === 'block' && ['sh', 'bash', 'shell'].includes(item.lang)
  const isExampleSpan = (item: Item) => item.kind === 'span' && /^curl\s/.test(item.text) && /\$|:\/\//.test(item.text)
  // Variables that examples use: a `NAME=value` span of the prose is a definition only for these.
  const used = new Set(found.filter((item) => shell(item) || isExampleSpan(item))
    .flatMap((item) => [...item.text.matchAll(/\$\{?([A-Za-z_]\w*)/g)].map((match) => match[1] as string)))
  const lines = markdown.split('\n')
  const env: string[] = []
  let auth = false
  const examples: Example[] = []
  /** The example of `text` at `line`, run after the doc's assignments so far. */
  const example = (line: number, text: string, expect: Expectation, body: boolean, prints?: string): Example =>
    ({ doc, line, text, setup: [...env], expect, endless: isEndless(text), auth, printsBody: body, prints })
  for (const [index, item] of found.entries()) {
    if (item.kind === 'span') {
      const assignment = /^([A-Za-z_]\w*)=\S+$/.exec(item.text)
      if (assignment !== null && used.has(assignment[1] as string)) env.push(item.text)
      if (isExampleSpan(item)) {
        examples.push(example(item.line, item.text, { from: 'any 2xx' }, printsBody(item.text)))
      }
      continue
    }
    if (!shell(item)) continue
    const commands = statements(item.text, item.line)
    if (!commands.some(({ text }) => hasCurl(text))) {
      // No example here, but what it assigns holds for the examples below (docs/query-language.md).
      env.push(...commands.filter(({ text }) => ASSIGNMENT.test(text)).map(({ text }) => text))
      continue
    }
    // The prose since the block before: it may say what the example prints.
    const before = found.slice(0, index).findLast((other) => other.kind === 'block')
    const intro = lines.slice(before?.end ?? 0, item.line - 1).join(' ').replace(/\s+/g, ' ')
    const prints = /against `npm start`: `([^`]+)`/.exec(intro)?.[1]
    const next = found.slice(index + 1).find((other) => other.kind === 'block')
    const between = next === undefined ? [] : lines.slice(item.end, next.line - 1)
    const shown = next !== undefined && next.lang === 'json' && between.every((line) => line.trim() === '')
      ? shownAnswer(next.text, `the answer shown at ${doc}:${next.line}`)
      : undefined
    if (commands.some(({ text }) => COMPOUND.test(text))) {
      // A script: run whole; its top-level assignments hold for the rest of the doc.
      examples.push(example(item.line + 1, item.text, { from: 'any 2xx' }, false, prints))
      env.push(...commands.filter(({ text }) => ASSIGNMENT.test(text)).map(({ text }) => text))
      continue
    }
    const curls = commands.filter(({ text }) => hasCurl(text))
    for (const { text, line } of commands) {
      const token = TOKEN.exec(text)
      if (token !== null) {
        env.push(tokenSetup(token[1] as string))
        auth = true
      } else if (START.test(text)) {
        // The service this test started (with AUTH_MODE=jwt after `npm run token`).
      } else if (hasCurl(text)) {
        const comment = STATUS_COMMENT.exec(text)
        const expect: Expectation = comment !== null
          ? {
              status: Number(comment[1]),
              code: comment[2],
              from: `its comment '#${comment[1]}${comment[2] === undefined ? '' : ` ${comment[2]}`}'`
            }
          : shown !== undefined && curls.length === 1 ? shown : { from: 'any 2xx' }
        examples.push(example(line, text, expect, printsBody(text), curls.length === 1 ? prints : undefined))
        if (ASSIGNMENT.test(text)) env.push(text)
      } else if (ASSIGNMENT.test(text)) {
        env.push(text)
      } else {
        throw new Error(`${doc}:${line}: a command this test does not know how to run beside curl examples: ${text}`)
      }
    }
  }
  return examples
}

export async function documents (): Promise<string[]> {
  const pages = (await readdir(path.join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).sort()
    .map((name) => `docs/${name}`)
  return ['README.md', 'client/README.md', ...pages]
}
