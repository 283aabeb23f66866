// A request's deadline as the MongoDB driver takes it: the `signal` option of every operation.
//
// The driver needs little of an AbortSignal: it adds an 'abort' listener while an operation
// waits for a server, for a connection and for the reply (three per command), removes it when
// the wait is over, and reads `aborted`, `reason` and `throwIfAborted()`. Node's AbortSignal is
// an EventTarget, whose listeners cost far more than that needs: with it, 3 to 6 % of the CPU
// of a 1-document page went into those three listeners (measured side by side with this
// class, docs/performance.md). This is that interface and no more; listeners are called as
// EventTarget calls them, once, with `this` the signal. test/database/deadline.test.ts holds the
// driver to using nothing else of it.

type AbortListener = (this: DeadlineSignal, event: { type: 'abort' }) => void

export class DeadlineSignal {
  aborted = false
  reason: unknown = undefined
  private listeners: AbortListener[] = []

  addEventListener (type: string, listener: AbortListener): void {
    // As on an AbortSignal, a listener added after the abort is never called.
    if (type === 'abort' && !this.aborted) this.listeners.push(listener)
  }

  removeEventListener (type: string, listener: AbortListener): void {
    if (type !== 'abort') return
    const at = this.listeners.lastIndexOf(listener)
    if (at >= 0) this.listeners.splice(at, 1)
  }

  throwIfAborted (): void {
    if (this.aborted) throw this.reason
  }

  abort (reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.listeners
    this.listeners = []
    for (const listener of listeners) {
      try {
        listener.call(this, { type: 'abort' })
      } catch (error) {
        // As EventTarget does: the other listeners still hear of it, the error is not swallowed.
        process.nextTick(() => { throw error })
      }
    }
  }

  /** Listeners now: the driver's, while its operations wait. */
  get listening (): number {
    return this.listeners.length
  }

  /** What the driver's `signal` option is typed as; the driver uses only the members above. */
  get signal (): AbortSignal {
    return this as unknown as AbortSignal
  }
}
