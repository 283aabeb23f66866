// The requests that wait for a change, by project ('*': any change), woken when one of theirs
// comes (change-hub.ts tells which changes came).
import type { ServerResponse } from 'node:http'
import type { Change } from './change-events.js'

type Wake = () => void

/** What a wait's deadline is kept by: the real clock, unless a test moves one of its own. */
export interface WaitClock {
  now: () => number
  /** Calls `fire` once `ms` have passed; returns the function that cancels it. */
  after: (ms: number, fire: () => void) => () => void
}

/** Date.now and setTimeout, looked up at each call: a test's fake timers (node:test's mock.timers) apply. */
export const realClock: WaitClock = {
  now: () => Date.now(),
  after: (ms, fire) => {
    const timer = setTimeout(fire, ms)
    return () => { clearTimeout(timer) }
  }
}

export class Waiters {
  private readonly waiters = new Map<string, Set<Wake>>()
  /** Of the waits, those of requests that read meanwhile (wait's `counted` false). */
  private reading = 0

  constructor (private readonly clock: WaitClock = realClock) {}

  /**
   * Calls `wake` once, at the next change that concerns `project` (any change when undefined),
   * or when the stream restarts or loses its history; returns the function that cancels it.
   * `counted` false: a request that reads meanwhile, not one asleep (count leaves it out).
   */
  wait (project: string | undefined, wake: Wake, counted = true): () => void {
    const key = project ?? '*'
    let set = this.waiters.get(key)
    if (set === undefined) {
      set = new Set()
      this.waiters.set(key, set)
    }
    // Counted out once, whether woken or cancelled first (a woken set leaves the map whole).
    let reading = !counted
    const done = (): void => {
      if (reading) this.reading--
      reading = false
    }
    if (reading) this.reading++
    const call: Wake = counted
      ? wake
      : () => {
          done()
          wake()
        }
    set.add(call)
    const waiting = set
    return () => {
      waiting.delete(call)
      done()
      if (waiting.size === 0 && this.waiters.get(key) === waiting) this.waiters.delete(key)
    }
  }

  /**
   * Resolves at the next change of `project` (wait()), at `until` (ms since the epoch), when
   * `stopping` calls back, or when `response` closes (the client left), whichever comes first.
   */
  async nextWake (
    project: string | undefined, until: number, stopping: (listener: () => void) => () => void, response: ServerResponse
  ): Promise<void> {
    await new Promise<void>((resolve) => {
      let cancelWait = (): void => {}
      let cancelStop = (): void => {}
      let cancelTimer = (): void => {}
      const done = (): void => {
        cancelTimer()
        cancelWait()
        cancelStop()
        response.off('close', done)
        resolve()
      }
      cancelTimer = this.clock.after(Math.max(0, until - this.clock.now()), done)
      cancelWait = this.wait(project, done)
      response.once('close', done)
      // A client that left before the wait began: its 'close' has come and gone.
      if (response.closed) {
        done()
        return
      }
      // Last: a service already stopping calls back at once, and done() must find the rest to undo.
      cancelStop = stopping(done)
    })
  }

  /** How many requests wait, asleep. */
  get count (): number {
    let count = -this.reading
    for (const set of this.waiters.values()) count += set.size
    return count
  }

  /** Wakes every waiting request. */
  wakeAll (): void {
    const all = [...this.waiters.values()]
    this.waiters.clear()
    for (const set of all) for (const wake of set) wake()
  }

  /** Wakes the requests that `changes` concern; every one when a change lost the history. */
  wakeFor (changes: readonly Change[]): void {
    if (this.waiters.size === 0) return
    const keys = new Set<string>()
    let everyone = false
    for (const change of changes) {
      if (change.lost) everyone = true
      for (const project of change.projects) keys.add(project)
    }
    if (everyone) {
      this.wakeAll()
      return
    }
    keys.add('*')
    for (const key of keys) {
      const set = this.waiters.get(key)
      if (set === undefined) continue
      this.waiters.delete(key)
      for (const wake of set) wake()
    }
  }
}
