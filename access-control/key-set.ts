// The keys of a JWKS endpoint (RFC 7517), fetched with bounds: a time limit and a size limit on
// every fetch, at most one fetch per cool-down whatever the tokens ask for, and one fetch at a
// time (callers that need it share it). Keys rotate without a restart: a token with a `kid` not
// in the set causes a refetch (after the cool-down), and each fetch replaces the whole set, so a
// key withdrawn by the identity provider stops working at the next fetch.
import { createPublicKey } from 'node:crypto'

export type KeyLookup =
  | { ok: true, pem: string }
  /** `unknown key`: not in a key set fetched; `key set unavailable`: no key set could be had. */
  | { ok: false, reason: 'unknown key' | 'key set unavailable', retryAfterMs: number }

export interface KeySetOptions {
  uri: string
  /** A fetch, its body included, gives up after this long. */
  timeoutMs: number
  /** A key set larger than this is refused (identity providers publish a few KiB). */
  maxBytes: number
  /**
   * At most one fetch for unknown `kid`s per this long (the fetch at start and the refresh of old
   * keys do not count)…
   */
  cooldownMs: number
  /** …and after a fetch that failed, no other one for this long. */
  retryMs: number
  /** How long a caller with an unknown `kid` may wait for the cool-down to end and the fetch after it. */
  maxWaitMs: number
  /** Keys older than this are fetched again (in the background: the cached ones keep working). */
  maxAgeMs: number
  /** Hears of every failed fetch, with the reason. */
  onFailure?: (reason: string) => void
  /** The clock of the cool-down, the pauses and the keys' age: Date.now unless a test moves one. */
  now?: () => number
  /** Waits out the end of a cool-down or pause: a timer unless a test's clock stands in for it. */
  sleep?: (ms: number) => Promise<void>
  /** What fetches the key set: the global fetch unless a test scripts the answers. */
  fetch?: (uri: string, init: RequestInit) => Promise<Response>
}

interface Key { alg?: string, pem: string }

const SIGNING_KEY_TYPES = new Set(['RSA', 'EC', 'OKP'])

class FetchError extends Error {}

export class KeySet {
  /** Fetches started, for the metrics and the tests. */
  fetches = 0
  #keys = new Map<string, Key>()
  #fetchedAt = -Infinity
  #attemptedAt = -Infinity
  #refetchedAt = -Infinity
  #failed = false
  #inFlight: Promise<void> | undefined
  readonly #now: () => number
  readonly #sleep: (ms: number) => Promise<void>
  readonly #fetchFn: (uri: string, init: RequestInit) => Promise<Response>

  constructor (private readonly options: KeySetOptions) {
    this.#now = options.now ?? (() => Date.now())
    this.#sleep = options.sleep ?? (async (ms) => { await new Promise((resolve) => setTimeout(resolve, ms)) })
    this.#fetchFn = options.fetch ?? (async (uri, init) => await fetch(uri, init))
  }

  /** The public key (PEM) for a token's `kid` and `alg`, or why there is none. */
  async key (kid: string, alg: string): Promise<KeyLookup> {
    const cached = this.#find(kid, alg)
    if (cached !== undefined) {
      if (this.#now() - this.#fetchedAt > this.options.maxAgeMs) this.#fetchWhenAllowed(0, false).catch(() => {})
      return { ok: true, pem: cached.pem }
    }
    await this.#fetchWhenAllowed(this.options.maxWaitMs, true)
    const found = this.#find(kid, alg)
    if (found !== undefined) return { ok: true, pem: found.pem }
    const retryAfterMs = Math.max(0, this.#nextAllowed(true) - this.#now())
    return { ok: false, reason: this.#failed ? 'key set unavailable' : 'unknown key', retryAfterMs }
  }

  /** Fetches now (at start-up, so that the first tokens find their keys). */
  async prefetch (): Promise<void> {
    await this.#fetchWhenAllowed(0, false)
  }

  #find (kid: string, alg: string): Key | undefined {
    const key = this.#keys.get(kid)
    return key !== undefined && (key.alg === undefined || key.alg === alg) ? key : undefined
  }

  /**
   * When the next fetch may start: after a failed one, once its pause is over (nothing is known
   * until a fetch succeeds); else at once, but for an unknown `kid` only once the cool-down since
   * the last such fetch is over, which is what keeps a storm of made-up `kid`s off the provider.
   */
  #nextAllowed (forUnknownKid: boolean): number {
    if (this.#failed) return this.#attemptedAt + this.options.retryMs
    return forUnknownKid ? this.#refetchedAt + this.options.cooldownMs : -Infinity
  }

  /** Joins the fetch under way, or starts one if it is allowed within `waitMs`; else nothing. */
  async #fetchWhenAllowed (waitMs: number, forUnknownKid: boolean): Promise<void> {
    if (this.#inFlight !== undefined) return await this.#inFlight
    const wait = this.#nextAllowed(forUnknownKid) - this.#now()
    if (wait > waitMs) return
    const startsAt = this.#now() + Math.max(0, wait)
    this.#attemptedAt = startsAt
    if (forUnknownKid) this.#refetchedAt = startsAt
    this.#inFlight = (async () => {
      if (wait > 0) await this.#sleep(wait)
      await this.#fetch()
    })().finally(() => { this.#inFlight = undefined })
    return await this.#inFlight
  }

  async #fetch (): Promise<void> {
    this.fetches++
    this.#attemptedAt = this.#now()
    try {
      this.#keys = keysOf(await this.#download())
      this.#fetchedAt = this.#now()
      this.#failed = false
    } catch (error) {
      // The keys already held stay usable: a key set that cannot be had revokes nothing.
      this.#failed = true
      this.options.onFailure?.(error instanceof FetchError
        ? error.message
        : `the key set could not be fetched (${(error as Error).name})`)
    }
  }

  async #download (): Promise<unknown> {
    const signal = AbortSignal.timeout(this.options.timeoutMs)
    let response: Response
    try {
      response = await this.#fetchFn(this.options.uri, { signal, headers: { accept: 'application/json' } })
    } catch (error) {
      throw new FetchError(signal.aborted
        ? `no answer within ${this.options.timeoutMs} ms`
        : `unreachable (${(error as Error).cause instanceof Error
          ? ((error as Error).cause as Error).message
          : (error as Error).message})`)
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      throw new FetchError(`it answered HTTP ${response.status}`)
    }
    const declared = Number(response.headers.get('content-length') ?? NaN)
    if (declared > this.options.maxBytes) {
      await response.body?.cancel().catch(() => {})
      throw new FetchError(`it is larger than ${this.options.maxBytes} bytes`)
    }
    const chunks: Uint8Array[] = []
    let size = 0
    try {
      for await (const chunk of response.body ?? []) {
        size += chunk.byteLength
        if (size > this.options.maxBytes) throw new FetchError(`it is larger than ${this.options.maxBytes} bytes`)
        chunks.push(chunk)
      }
    } catch (error) {
      await response.body?.cancel().catch(() => {})
      if (error instanceof FetchError) throw error
      throw new FetchError(signal.aborted
        ? `no whole answer within ${this.options.timeoutMs} ms`
        : 'the answer broke off')
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'))
    } catch {
      throw new FetchError('it is not JSON')
    }
  }
}

/** The signing keys of a JWKS document; a document without one is refused, keys that are not usable are skipped. */
function keysOf (document: unknown): Map<string, Key> {
  const list = (document as { keys?: unknown } | null)?.keys
  if (!Array.isArray(list)) throw new FetchError('it has no "keys" array')
  const keys = new Map<string, Key>()
  for (const jwk of list as Array<Record<string, unknown>>) {
    if (jwk === null || typeof jwk !== 'object' || typeof jwk.kid !== 'string' ||
      !SIGNING_KEY_TYPES.has(jwk.kty as string)) continue
    if (jwk.use !== undefined && jwk.use !== 'sig') continue
    try {
      const pem = createPublicKey({ key: jwk as never, format: 'jwk' })
        .export({ format: 'pem', type: 'spki' })
        .toString()
      keys.set(jwk.kid, { pem, ...(typeof jwk.alg === 'string' ? { alg: jwk.alg } : {}) })
    } catch {
      // A key Node cannot read (a curve it lacks, a malformed modulus) signs nothing here.
    }
  }
  if (keys.size === 0) throw new FetchError('it holds no usable signing key')
  return keys
}
