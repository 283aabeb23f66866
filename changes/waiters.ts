// The requests that wait for a change, by project ('*': any change), woken when one of theirs
// comes (change-hub.ts tells which changes came).
import type { ServerResponse } from 'node:http'
import type { Change } from './change-events.js'

type Wake = () => void

export class Waiters {
  private readonly waiters = new Map<string, Set<Wake>>()

  /**
   * Calls `wake` once, at the next change that concerns `project` (any change when undefined),
   * or when the stream restarts or loses its history; returns the function that cancels it.
   */
  wait (project: string | undefined, wake: Wake): () => void {
    const key = project ?? '*'
    let set = this.waiters.get(key)
    if (set === undefined) {
      set = new Set()
      this.waiters.set(key, set)
    }
    set.add(wake)
    const waiting = set
    return () => {
      waiting.delete(wake)
      if (waiting.size === 0 && this.waiters.get(key) === waiting) this.waiters.delete(key)
    }
  }

  /**
   * Resolves at the next change of `project` (wait()), at `until` (ms since the epoch), when
   * `stopping` calls back, or when `response` closes (the client left), whichever comes first.
   */
  async nextWake (project: string | undefined, until: number, stopping: (listener: () => void) => () => void, response: ServerResponse): Promise<void> {
    await new Promise<void>((resolve) => {
      let cancelWait = (): void => {}
      let cancelStop = (): void => {}
      const done = (): void => {
        clearTimeout(timer)
        cancelWait()
        cancelStop()
        response.off('close', done)
        resolve()
      }
      const timer = setTimeout(done, Math.max(0, until - Date.now()))
      cancelWait = this.wait(project, done)
      cancelStop = stopping(done)
      response.once('close', done)
    })
  }

  /** How many requests wait. */
  get count (): number {
    let count = 0
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
