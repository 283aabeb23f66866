// Before an answer says "nothing", a feed step reads the changes after its point directly
// (feed-steps.ts). Steps confirming the same point share that read: the steps that arrive while
// one runs share the next, which begins after all of them arrived, so it sees every change
// committed before each of them. It begins when the running one ends, or JOIN_MS after the first
// of them arrived when the database is slow to answer: a step waits a read and a moment, never
// two reads in a row. A burst of waits costs a few reads, not one each. A shared read that finds
// any change leaves each step to read for itself.
import { BSON } from 'mongodb'
import { atMost, pause, unlessAborted, type Wait } from '../lib/pause.js'
import type { Gathered, StreamPoint } from './recent-changes.js'

/** A read of every change after a point (any project, the first one enough), bounded in time. */
export type AnyChangeAfter = (point: StreamPoint) => Promise<Gathered>

/** How long the steps that arrive during a slow read wait at most before their own shared read begins. */
export const JOIN_MS = 100

interface Queue { point: StreamPoint, running?: Promise<Gathered>, next?: Promise<Gathered> }

export class QuietReads {
  private readonly queues = new Map<string, Queue>()

  constructor (private readonly read: AnyChangeAfter, private readonly wait: Wait = pause) {}

  /**
   * What the next shared read after `point` finds, when it finds no change at all: the step's
   * answer without events, at the point it reached. Undefined when it found one (the step reads
   * for itself); the read's error when it failed; `signal`'s reason when the step's time ends first.
   */
  async confirm (point: StreamPoint, signal: AbortSignal): Promise<Extract<Gathered, { lost: false }> | undefined> {
    signal.throwIfAborted()
    const key = BSON.EJSON.stringify({ token: point.resumeToken, after: point.after ?? null }, { relaxed: false })
    const queue = this.queues.get(key) ?? { point }
    this.queues.set(key, queue)
    queue.next ??= this.after(key, queue)
    const found = await unlessAborted(queue.next, signal)
    // Nothing read at all (its `after` unmoved): the step's own point, its resume token moved on,
    // as its own read would give it. A change without a document moved it: the step reads itself.
    if (found.lost || found.ids.length > 0 || found.point.after !== point.after) return undefined
    return { lost: false, ids: [], point: { ...point, resumeToken: found.point.resumeToken }, committedAt: [] }
  }

  /** How many points have a read running or waiting (none once they have ended). */
  get size (): number {
    return this.queues.size
  }

  /**
   * The read that follows the one running: it begins once that one has ended or JOIN_MS have
   * passed, and takes no joiner after.
   */
  private async after (key: string, queue: Queue): Promise<Gathered> {
    // Awaited even with no read running: confirm() has made this the queue's next read by then.
    await (queue.running === undefined ? undefined : atMost(queue.running.catch(() => {}), JOIN_MS, this.wait))
    const running = this.read(queue.point)
    queue.running = running
    queue.next = undefined
    try {
      return await running
    } finally {
      if (queue.running === running) queue.running = undefined
      // Reads may overlap: an older one ending last leaves a newer queue of the same point alone.
      if (queue.running === undefined && queue.next === undefined &&
        this.queues.get(key) === queue) this.queues.delete(key)
    }
  }
}
