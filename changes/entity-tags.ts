// The entity tags of conditional requests (docs/conditional-requests.md): what an ETag holds (a
// digest of the body, one of the request, and the change stream's point the answer was read
// after), how If-None-Match is read back, and the shared reads that decide a 304
// (plugins/conditional-requests.ts answers with them).
import { hash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { RecentMap } from '../lib/recent-map.js'
import type { TextSeal } from '../lib/text-seal.js'
import type { Gathered, StreamPoint } from './recent-changes.js'

// v2: the point is sealed (v1 carried it readable; a v1 tag is no longer read, and its request is answered 200).
const VERSION = 'v2'
/** Request digests kept, and the longest identity kept (longer ones are digested every time). */
const REQUEST_DIGESTS_KEPT = 1000
const KEPT_IDENTITY_LENGTH = 1024
/** Bodies kept with their digests: how many, how large one may be, and all together (bytes or characters). */
const BODIES_KEPT = 1000
const KEPT_BODY_LENGTH = 256 * 1024
const BODIES_KEPT_SIZE = 8 * 1024 * 1024

export interface Validator { body: string, request: string, point?: StreamPoint }

/** The first `chars` characters of the base64url SHA-256 of `data` (6 bits each): one call, no Hash object. */
const digest = (data: string | Buffer, chars: number): string => hash('sha256', data, 'base64url').slice(0, chars)

/** Whether two bodies hold the same bytes (a page's body is text below a size, a Buffer above it). */
function sameBytes (a: string | Buffer, b: string | Buffer): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b
  return a.equals(b)
}

/** The bound a point is sealed with: the tag's own digests, so that no point moves to another tag. */
const boundOf = (body: string, request: string): string => `${VERSION}.${body}.${request}`

/** The ETag of `validator`; its point sealed (lib/text-seal.ts): it moves with every project's writes. */
export function etagOf ({ body, request, point }: Validator, seal: TextSeal): string {
  const at = point === undefined
    ? ''
    : `.${seal.seal(JSON.stringify(point.after === undefined
      ? { t: point.resumeToken }
      : { t: point.resumeToken, a: point.after }), boundOf(body, request))}`
  return `W/"${VERSION}.${body}.${request}${at}"`
}

/** One of the service's entity tags: its body's digest, its request's, and its sealed point, if any. */
const TAG = new RegExp(
  `^\\s*(?:W/)?"${VERSION}\\.([A-Za-z0-9_-]{22})\\.([A-Za-z0-9_-]{11})(?:\\.([A-Za-z0-9_-]+))?"\\s*$`)

/** The service's validators among `If-None-Match`'s entity tags (weak comparison: W/ ignored). */
export function validatorsIn (header: string | undefined, seal: TextSeal): Validator[] {
  if (header === undefined || header.length > 8192) return []
  const found: Validator[] = []
  for (const tag of header.split(',')) {
    const match = TAG.exec(tag)
    if (match === null) continue
    const [, body, request, at] = match as unknown as [string, string, string, string | undefined]
    const point = at === undefined ? undefined : pointIn(seal.open(at, boundOf(body, request))?.toString('utf8'))
    found.push({ body, request, ...(point === undefined ? {} : { point }) })
  }
  return found
}

/** The point a sealed text holds; none where it cannot be opened (another key, altered, grafted). */
function pointIn (text: string | undefined): StreamPoint | undefined {
  if (text === undefined) return undefined
  try {
    const read = JSON.parse(text) as { t?: unknown, a?: unknown }
    if (read.t === null || typeof read.t !== 'object' || typeof (read.t as { _data?: unknown })._data !== 'string') {
      return undefined
    }
    const resumeToken = read.t as StreamPoint['resumeToken']
    return { resumeToken, ...(typeof read.a === 'string' ? { after: read.a } : {}) }
  } catch {
    return undefined
  }
}

/**
 * Reads of the changes after a point, shared: requests that revalidate the same answer at once
 * share one. A read under way may have begun before a request arrived, and must not answer for
 * changes committed after it began: that request, and all that arrive meanwhile, share the next.
 */
export class SharedProbes {
  private readonly probes = new Map<string, { running: Promise<Gathered>, next?: Promise<Gathered> }>()

  run (key: string, read: () => Promise<Gathered>): Promise<Gathered> {
    const entry = this.probes.get(key)
    if (entry === undefined) {
      const running = read()
      const created: { running: Promise<Gathered>, next?: Promise<Gathered> } = { running }
      this.probes.set(key, created)
      running.catch(() => {}).finally(() => {
        if (this.probes.get(key) === created && created.next === undefined) this.probes.delete(key)
      }).catch(() => {})
      return running
    }
    entry.next ??= entry.running.catch(() => {}).then(async () => {
      const running = read()
      entry.running = running
      entry.next = undefined
      running.catch(() => {}).finally(() => {
        if (this.probes.get(key) === entry && entry.next === undefined && entry.running === running) {
          this.probes.delete(key)
        }
      }).catch(() => {})
      return await running
    })
    return entry.next
  }
}

/**
 * The digests an ETag holds, remembered: a poll or a popular page asks the same URL again, and
 * is often answered with the same bytes again, which costs less to compare than to digest. The
 * body's digest is the body's alone, so only byte equality decides (the request is where to look).
 */
export class AnswerDigests {
  private readonly requests = new RecentMap<string>(REQUEST_DIGESTS_KEPT)
  /**
   * The last body of each request lately answered, with its digest; a Buffer is copied: the kept
   * bytes are never anyone else's to change.
   */
  private readonly bodies = new LRUCache<string, { body: string | Buffer, digest: string }>({
    max: BODIES_KEPT, maxSize: BODIES_KEPT_SIZE, sizeCalculation: ({ body }) => Math.max(body.length, 1)
  })

  /** `collation`: the lists' collation key, part of every request's identity. */
  constructor (private readonly collation: string) {}

  /** The digest of a request's identity: its path and query as sent, the caller's projects and the collation. */
  request (url: string, projects: '*' | ReadonlySet<string> | undefined): string {
    const readable = projects === undefined || projects === '*' ? '*' : [...projects].sort().join(',')
    const identity = `${url}\n${readable}`
    const kept = identity.length <= KEPT_IDENTITY_LENGTH
    const known = kept ? this.requests.get(identity) : undefined
    if (known !== undefined) return known
    const made = digest(`${identity}\n${this.collation}`, 11)
    if (kept) this.requests.set(identity, made)
    return made
  }

  /** The digest of `body`, the answer of the request whose digest is `request`. */
  body (request: string, body: string | Buffer): string {
    const last = this.bodies.get(request)
    if (last !== undefined && sameBytes(last.body, body)) return last.digest
    const made = digest(body, 22)
    if (body.length <= KEPT_BODY_LENGTH) {
      this.bodies.set(request, { body: typeof body === 'string' ? body : Buffer.from(body), digest: made })
    }
    return made
  }
}
