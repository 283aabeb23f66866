// Which projects exist, remembered for a short while: on a warm path a nested list is one
// database command, not two. Both answers are kept for PROJECT_CACHE_TTL_MS, so a project
// created is listable, and one deleted answers 404, at most that long after the change
// (docs/query-language.md, "Projects that come and go"). The map is bounded: the oldest entries go first.

export class ProjectCache {
  readonly #entries = new Map<string, { exists: boolean, until: number }>()
  /** The lookups under way: the requests that want the same project meanwhile wait for its answer. */
  readonly #asking = new Map<string, Promise<boolean>>()

  constructor (readonly ttlMs: number, readonly maxEntries: number) {}

  /** true or false while remembered; undefined when the database must be asked. */
  get (id: string, now = Date.now()): boolean | undefined {
    if (this.ttlMs === 0) return undefined
    const entry = this.#entries.get(id)
    if (entry === undefined) return undefined
    if (entry.until > now) return entry.exists
    this.#entries.delete(id)
    return undefined
  }

  set (id: string, exists: boolean, now = Date.now()): void {
    if (this.ttlMs === 0) return
    this.#entries.delete(id)
    if (this.#entries.size >= this.maxEntries) {
      // Insertion order is age order (entries are re-inserted when set): drop the oldest.
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#entries.delete(oldest.value)
    }
    this.#entries.set(id, { exists, until: now + this.ttlMs })
  }

  /**
   * Whether the project exists: remembered, else asked with `ask` and remembered, once for all the
   * requests that want it meanwhile (a burst on a project not remembered sends one command, not
   * one each). With PROJECT_CACHE_TTL_MS=0 every request asks for itself.
   */
  lookup (id: string, ask: () => Promise<boolean>): boolean | Promise<boolean> {
    const known = this.get(id)
    if (known !== undefined) return known
    if (this.ttlMs === 0) return ask()
    let asking = this.#asking.get(id)
    if (asking === undefined) {
      const asked = ask().then((exists) => {
        this.set(id, exists)
        return exists
      })
      const done = (): void => { this.#asking.delete(id) }
      asked.then(done, done)
      this.#asking.set(id, asked)
      asking = asked
    }
    return asking
  }

  /**
   * Whether the project exists, for one request: lookup() with `ask`, a lookup on a budget of its
   * own, waited for through `wait` (within the request's deadline). When a lookup another
   * request began failed in a way `askAgain` accepts (it ran out of time while this request has
   * time left), this request asks again; its own lookup's failure is its answer.
   */
  async exists (id: string, { ask, wait, askAgain }: {
    ask: () => Promise<boolean>
    wait: (lookup: Promise<boolean>) => Promise<boolean>
    askAgain: (error: unknown) => boolean
  }): Promise<boolean> {
    let asked = false
    const mine = async (): Promise<boolean> => {
      asked = true
      return await ask()
    }
    for (;;) {
      const known = this.lookup(id, mine)
      if (typeof known === 'boolean') return known
      try {
        return await wait(known)
      } catch (error) {
        if (asked || !askAgain(error)) throw error
      }
    }
  }

  get size (): number { return this.#entries.size }
}
