// A typed client of Listing API: one list call, page and document iterators that follow `next`,
// a change feed as an async iterator, retries that honour Retry-After, and problem+json errors as
// ListingProblem. Its types (types.ts) come from the service's OpenAPI document; the runtime
// needs nothing but `fetch`.
import { ListingProblem, jsonOf, problemOf, startsAgain } from './problem.js'
import { MAX_WAIT_MS, RETRIED, Retryable, TokenFailure, path, queryString, sleep } from './requests.js'
import type {
  CallOptions, ChangeEvent, ChangesOptions, ClientOptions, Counts, CountsOptions, FeedAnswer, FeedName, FieldName,
  ListName, ListOptions, Page, Picked, RawQuery, WalkOptions
} from './types.js'

export * from './types.js'
export { ListingProblem, retryAfterMs, type ProblemItem } from './problem.js'

export class ListingClient {
  readonly #base: string
  readonly #options: ClientOptions
  readonly #fetch: typeof fetch
  /** The last answer per URL, with its ETag, when asked to revalidate (ClientOptions.revalidate); oldest first. */
  readonly #kept = new Map<string, { etag: string, text: string }>()

  constructor (options: ClientOptions) {
    this.#base = String(options.baseUrl).replace(/\/+$/, '')
    this.#options = options
    this.#fetch = options.fetch ?? globalThis.fetch
  }

  /**
   * One page of a list. Retries 429, 502, 503, 504, network failures and timeouts; throws
   * ListingProblem for other answers.
   */
  async list<L extends ListName, const F extends ReadonlyArray<FieldName<L>> | undefined = undefined> (
    list: L, options: ListOptions<L, F>, call: CallOptions = {}
  ): Promise<Page<Picked<L, F>>> {
    const url = `${this.#base}${path(list, options.projectId)}${queryString(options as RawQuery)}`
    return await this.#withRetries(async (signal) => await this.#get(
      url, signal, call, this.#options.revalidate !== undefined && this.#options.revalidate !== false
    ), call.signal) as Page<Picked<L, F>>
  }

  /** How many documents of a list per value of `by` (the service's docs/counts.md). Retries like list(). */
  async counts<L extends ListName> (list: L, options: CountsOptions<L>, call: CallOptions = {}): Promise<Counts> {
    const params = new URLSearchParams({ by: options.by })
    if (options.filter !== undefined && Object.keys(options.filter).length > 0) {
      params.set('filter', JSON.stringify(options.filter))
    }
    if (options.limit !== undefined) params.set('limit', String(options.limit))
    const url = `${this.#base}${path(list, options.projectId)}/counts?${params.toString()}`
    return await this.#withRetries(async (signal) => await this.#get(
      url, signal, call, this.#options.revalidate !== undefined && this.#options.revalidate !== false
    ), call.signal) as Counts
  }

  /**
   * The pages of a list, following `next` to the end. A page is requested only when the one
   * before it has been taken: nothing is read ahead. Resume a walk by passing a page's
   * `next` as `after`.
   */
  async * pages<L extends ListName, const F extends ReadonlyArray<FieldName<L>> | undefined = undefined> (
    list: L, options: WalkOptions<L, F>, call: CallOptions = {}
  ): AsyncGenerator<Page<Picked<L, F>>, void, undefined> {
    const { pageSize, ...query } = options
    let page = await this.list(list, { ...query, limit: pageSize ?? query.limit } as ListOptions<L, F>, call)
    for (;;) {
      yield page
      if (page.next === undefined) return
      // skip and count belong to the first page: skip with after is refused, a count per
      // page is wasted.
      page = await this.list(list, {
        ...query, limit: pageSize ?? query.limit, skip: undefined, count: undefined, after: page.next
      } as ListOptions<L, F>, call)
    }
  }

  /** Every document of a list, page after page (see pages()). */
  async * all<L extends ListName, const F extends ReadonlyArray<FieldName<L>> | undefined = undefined> (
    list: L, options: WalkOptions<L, F>, call: CallOptions = {}
  ): AsyncGenerator<Picked<L, F>, void, undefined> {
    for await (const page of this.pages(list, options, call)) yield * page.data
  }

  /**
   * Follows a change feed (the service's docs/changes.md), forever or until `call.signal`
   * aborts or the loop breaks: every event in order, the listing first when there is no
   * `since`. Retries like list(); on 410, or a `since` the service cannot read (400
   * INVALID_CURSOR), it calls onExpired, then lists again from scratch.
   */
  async * changes<L extends FeedName, const F extends ReadonlyArray<FieldName<L>> | undefined = undefined> (
    list: L, options: ChangesOptions<L, F>, call: CallOptions = {}
  ): AsyncGenerator<ChangeEvent<L, F>, void, undefined> {
    const base = `${this.#base}${path(list, options.projectId)}/changes`
    const wait = options.wait ?? 30
    let since = options.since
    for (;;) {
      const params = new URLSearchParams()
      if (options.filter !== undefined && Object.keys(options.filter).length > 0) {
        params.set('filter', JSON.stringify(options.filter))
      }
      if (options.fields !== undefined && options.fields.length > 0) params.set('fields', options.fields.join(','))
      if (options.limit !== undefined) params.set('limit', String(options.limit))
      params.set('wait', String(wait))
      if (since !== undefined) params.set('since', since)
      const url = `${base}?${params.toString()}`
      let answer: FeedAnswer<L, F>
      try {
        // An attempt may wait `wait` seconds for its answer.
        answer = await this.#withRetries(
          async (signal) => await this.#get(url, signal, call), call.signal, wait * 1000
        ) as FeedAnswer<L, F>
      } catch (error) {
        if (since === undefined || !startsAgain(error)) throw error
        await options.onExpired()
        since = undefined
        continue
      }
      // After the caller's abort nothing more is yielded, and no token is saved past events not taken.
      for (const event of answer.events) {
        call.signal?.throwIfAborted()
        yield event
      }
      call.signal?.throwIfAborted()
      since = answer.next
      await options.onToken?.(answer.next, answer.synced)
    }
  }

  async #get (url: string, signal: AbortSignal, call: CallOptions, revalidate = false): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json' }
    const requestId = call.requestId ?? this.#options.requestId?.()
    if (requestId !== undefined) headers['x-request-id'] = requestId
    const kept = revalidate ? this.#kept.get(url) : undefined
    if (kept !== undefined) headers['if-none-match'] = kept.etag
    let response: Response
    let text: string | ListingProblem
    try {
      // The token provider's own failure is the caller's; its wait ends with the attempt's signal.
      const token = await this.#token(signal)
      if (token !== undefined) headers.authorization = `Bearer ${token}`
      response = await this.#fetch(url, { headers, signal })
      // Not modified: the answer kept with that ETag, read anew so that no caller holds another's
      // copy (RFC 9110 §15.4.5).
      if (response.status === 304 && kept !== undefined) return JSON.parse(kept.text)
      text = response.ok ? await response.text() : await problemOf(response)
    } catch (error) {
      if (error instanceof TokenFailure) throw error.failure
      // The caller's abort ends the call; a refused or reset connection, or a timed-out attempt, is retried.
      if (call.signal?.aborted === true) throw call.signal.reason
      throw new Retryable(error)
    }
    if (text instanceof ListingProblem) {
      if (RETRIED.has(text.status)) throw new Retryable(text, text.retryAfterMs)
      throw text
    }
    const body = jsonOf(response, text)
    const etag = response.headers.get('etag')
    if (revalidate && etag !== null) this.#keep(url, etag, text)
    return body
  }

  async #token (signal: AbortSignal): Promise<string | undefined> {
    const provider = this.#options.token
    if (provider === undefined) return undefined
    signal.throwIfAborted()
    return await new Promise<string | undefined>((resolve, reject) => {
      const aborted = (): void => { reject(signal.reason) }
      signal.addEventListener('abort', aborted, { once: true })
      Promise.resolve().then(provider).then(resolve, (error: unknown) => { reject(new TokenFailure(error)) })
        .finally(() => { signal.removeEventListener('abort', aborted) })
    })
  }

  #keep (url: string, etag: string, text: string): void {
    const max = typeof this.#options.revalidate === 'object' ? this.#options.revalidate.maxKept ?? 100 : 100
    this.#kept.delete(url)
    this.#kept.set(url, { etag, text })
    while (this.#kept.size > max) this.#kept.delete(this.#kept.keys().next().value as string)
  }

  async #withRetries<T> (
    attempt: (signal: AbortSignal) => Promise<T>, callerSignal?: AbortSignal, waitMs = 0
  ): Promise<T> {
    const { attempts = 10, totalMs = 60_000, baseDelayMs = 250, maxDelayMs = 5_000 } = this.#options.retry ?? {}
    const timeoutMs = (this.#options.timeoutMs ?? 10_000) + waitMs
    const started = Date.now()
    for (let n = 1; ; n++) {
      // Not AbortSignal.timeout(): its timer does not keep the process alive while an attempt waits.
      const timeout = new AbortController()
      const timer = setTimeout(
        () => timeout.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
        timeoutMs
      )
      const signal = callerSignal === undefined ? timeout.signal : AbortSignal.any([callerSignal, timeout.signal])
      try {
        return await attempt(signal)
      } catch (error) {
        if (!(error instanceof Retryable)) throw error
        const failure = error.failure
        // Retry-After is a floor; up to a quarter more spreads clients that were told the same.
        const delayMs = error.retryAfterMs !== undefined
          ? Math.round(error.retryAfterMs * (1 + Math.random() / 4))
          : Math.round(Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (n - 1)))
        // A wait longer than the total time, or than a timer can hold, is not started: the answer stands.
        if (n >= attempts || delayMs > MAX_WAIT_MS || Date.now() - started + delayMs > totalMs) throw failure
        this.#options.onRetry?.({
          attempt: n,
          delayMs,
          reason: failure instanceof ListingProblem
            ? `${failure.status} ${failure.code}`
            : String((failure as Error).cause ?? failure)
        })
        await sleep(delayMs, callerSignal)
      } finally {
        clearTimeout(timer)
      }
    }
  }
}

export function createClient (options: ClientOptions): ListingClient {
  return new ListingClient(options)
}
