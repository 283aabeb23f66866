// Before an answer says "nothing", a feed step reads the changes after its point directly
// (feed-steps.ts). Steps confirming the same point share that read: one runs at a time per point,
// and the steps that arrive meanwhile share the next, which begins after all of them arrived, so
// it sees every change committed before each of them. A burst of waits costs a read or two, not
// one each. A shared read that finds any change leaves each step to read for itself.
import { BSON } from 'mongodb'
import { unlessAborted } from '../lib/pause.js'
import type { Gathered, StreamPoint } from './recent-changes.js'

/** A read of every change after a point (any project, the first one enough), bounded in time. */
export type AnyChangeAfter = (point: StreamPoint) => Promise<Gathered>

interface Queue { point: StreamPoint, running?: Promise<Gathered>, next?: Promise<Gathered> }

export class QuietReads {
  private readonly queues = new Map<string, Queue>()

  constructor (private readonly read: AnyChangeAfter) {}

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

  /** The read that follows the one running: it begins once that one has ended, and takes no joiner after. */
  private async after (key: string, queue: Queue): Promise<Gathered> {
    await queue.running?.catch(() => {})
    const running = this.read(queue.point)
    queue.running = running
    queue.next = undefined
    try {
      return await running
    } finally {
      if (queue.running === running) queue.running = undefined
      if (queue.running === undefined && queue.next === undefined) this.queues.delete(key)
    }
  }
}
