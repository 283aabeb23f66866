// Before an answer says "nothing", a feed step reads the changes after its point directly
// (feed-steps.ts). Steps confirming the same point share that read: the steps that arrive while
// one runs share the next, which begins after all of them arrived, so it sees every change
// committed before each of them. It begins when the running one ends, or JOIN_MS after the first
// of them arrived when the database is slow to answer: a step waits a read and a moment, never
// two reads in a row. A burst of waits costs a few reads, not one each. The read keeps every
// change it looked at, of any project: each step takes its own from them (stepAnswer), and
// reads for itself only when they cannot tell.
import { BSON } from 'mongodb'
import { atMost, pause, unlessAborted, type Wait } from '../lib/pause.js'
import type { ChangeHub } from './change-hub.js'
import type { Change } from './change-events.js'
import { Gathering, type Gathered, type StreamPoint } from './recent-changes.js'

/**
 * What a shared read found after a point: its answer for any project, every change it looked
 * at, and whether it caught up with the time it began at.
 */
export type SharedRead =
  | { lost: true }
  | { lost: false, point: StreamPoint, changes: Change[], caughtUp: boolean }

/**
 * A read of every change after a point, bounded in time; `firstBatch` is told what it found by
 * the end of its first batch with changes, when it reads on (not caught up yet).
 */
export type AnyChangeAfter = (point: StreamPoint, firstBatch: (read: SharedRead) => void) => Promise<SharedRead>

/** What a step wants of the changes: its project's (any when undefined), at most `limit` documents. */
export interface StepWants {
  project: string | undefined
  limit: number
  admit: (id: unknown) => boolean
  /** Places a point after a change among the hub's recent changes (ChangeHub#join). */
  join: (at: StreamPoint) => StreamPoint
}

/**
 * A step's answer from the shared read after its `point`, taken as gather() takes it from the
 * recent changes; undefined when the step must read for itself: the read crossed a lost history,
 * or did not catch up and found nothing of the step's.
 */
export function stepAnswer (read: SharedRead, point: StreamPoint, wants: StepWants): Gathered | undefined {
  if (read.lost) return undefined
  // Nothing read at all: the step's own point (its place among the recent changes too), its resume token moved on.
  if (read.changes.length === 0) {
    return read.caughtUp
      ? { lost: false, ids: [], point: { ...point, resumeToken: read.point.resumeToken }, committedAt: [] }
      : undefined
  }
  const gathering = new Gathering(wants.project, wants.limit, wants.admit)
  for (const change of read.changes) {
    if (change.lost) return undefined
    // Full: the step stands after this change, before the ones it did not take.
    if (gathering.offer(change) === 'taken' && gathering.size === wants.limit) {
      return gathering.at(wants.join({ resumeToken: change.token, after: change.key }))
    }
  }
  if (!read.caughtUp && gathering.size === 0) return undefined
  return gathering.at(read.point)
}

/**
 * The changes after `point` that the hub's recent changes have not brought yet: from the next
 * shared read after it; or, when a change of the step's project comes first, from the end of
 * that read's first batch or from the recent changes (an answer with events need not wait for
 * the read to catch up: only one without vouches that nothing was missed). Undefined when the
 * step must read for itself (stepAnswer).
 */
export async function changesAfter (
  hub: ChangeHub, reads: QuietReads, point: StreamPoint, wants: StepWants, signal: AbortSignal
): Promise<Gathered | undefined> {
  let cancel = (): void => {}
  let tellFirst = (_read: SharedRead): void => {}
  // Changes of the step's own in the shared read's first batch: an answer, before the read has caught up.
  const fromFirstBatch = new Promise<{ gathered: Gathered }>((resolve) => {
    tellFirst = (read) => {
      const gathered = stepAnswer(read, point, wants)
      if (gathered !== undefined && !gathered.lost && gathered.ids.length > 0) resolve({ gathered })
    }
  })
  const fromHub = new Promise<{ gathered: Gathered }>((resolve) => {
    const look = (): void => {
      const from = hub.locate(point)
      const gathered = from === undefined ? undefined : hub.gather(from, wants.project, wants.limit, wants.admit)
      if (gathered !== undefined && (gathered.lost || gathered.ids.length > 0)) resolve({ gathered })
      else cancel = hub.wait(wants.project, look, false)
    }
    // Not counted among the requests asleep: this one reads meanwhile.
    cancel = hub.wait(wants.project, look, false)
  })
  const shared = reads.confirm(point, signal, tellFirst)
  try {
    const first = await Promise.race([shared, fromHub, fromFirstBatch])
    if (!('gathered' in first)) return stepAnswer(first, point, wants)
    shared.catch(() => {})
    return first.gathered
  } finally {
    cancel()
  }
}

/** How long the steps that arrive during a slow read wait at most before their own shared read begins. */
export const JOIN_MS = 100

interface Queue {
  point: StreamPoint
  running?: Promise<SharedRead>
  /** The next read, and what it found by the end of its first batch, for each step that shares it. */
  next?: { read: Promise<SharedRead>, first: PromiseWithResolvers<SharedRead> }
}

export class QuietReads {
  private readonly queues = new Map<string, Queue>()

  constructor (private readonly read: AnyChangeAfter, private readonly wait: Wait = pause) {}

  /**
   * What the next shared read after `point` finds (stepAnswer takes a step's answer from it);
   * the read's error when it failed; `signal`'s reason when the step's time ends first.
   * `firstBatch` hears what it found by the end of its first batch, when it reads on.
   */
  async confirm (
    point: StreamPoint, signal: AbortSignal, firstBatch?: (read: SharedRead) => void
  ): Promise<SharedRead> {
    signal.throwIfAborted()
    const key = BSON.EJSON.stringify({ token: point.resumeToken, after: point.after ?? null }, { relaxed: false })
    const queue = this.queues.get(key) ?? { point }
    this.queues.set(key, queue)
    if (queue.next === undefined) {
      const first = Promise.withResolvers<SharedRead>()
      queue.next = { first, read: this.after(key, queue, first.resolve) }
    }
    if (firstBatch !== undefined) queue.next.first.promise.then(firstBatch)
    return await unlessAborted(queue.next.read, signal)
  }

  /** How many points have a read running or waiting (none once they have ended). */
  get size (): number {
    return this.queues.size
  }

  /**
   * The read that follows the one running: it begins once that one has ended or JOIN_MS have
   * passed, and takes no joiner after.
   */
  private async after (key: string, queue: Queue, first: (read: SharedRead) => void): Promise<SharedRead> {
    // Awaited even with no read running: confirm() has made this the queue's next read by then.
    await (queue.running === undefined ? undefined : atMost(queue.running.catch(() => {}), JOIN_MS, this.wait))
    const running = this.read(queue.point, first)
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
