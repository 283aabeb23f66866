// The recent changes of one collection, in the order its stream brought them: each numbered,
// found by its key, so that a feed's next answer is read from memory (change-hub.ts fills it).
// Pure bookkeeping: no database, no timers.
import { randomBytes } from 'node:crypto'
import { BSON, ObjectId, type Document } from 'mongodb'
import { concerns, type Change } from './change-events.js'

/** A place in a collection's changes, as a feed token holds it (changes/feed-token.ts). */
export interface StreamPoint {
  /** Where MongoDB resumes: an event's resume token or a postBatchResumeToken. */
  resumeToken: Document
  /**
   * The `_data` of the collection's last change behind this point, when known: any replica that
   * saw that change finds the point among its recent changes.
   */
  after?: string
  /** The hub and sequence number of the replica that issued the point. */
  epoch?: string
  seq?: number
}

/** What a feed reads from the changes after a point. */
export type Gathered =
  | { lost: false, ids: unknown[], point: StreamPoint, committedAt: number[] }
  | { lost: true }

export interface Entry extends Change { seq: number }

/**
 * An id's text, by which a gathering counts each document once: an ObjectId's hex, else its
 * canonical Extended JSON, which keeps BSON types apart (a Date and the string of its ISO text).
 */
export const idText = (id: unknown): string =>
  id instanceof ObjectId ? id.toHexString() : BSON.EJSON.stringify({ id }, { relaxed: false })

/**
 * The documents a gathering has found so far: each changed document of `project` (every one when
 * undefined) that `admit` lets in, once, in the order of its first change found.
 */
export class Gathering {
  private readonly found = new Map<string, unknown>()
  private readonly committedAt: number[] = []

  constructor (
    private readonly project: string | undefined,
    private readonly limit: number,
    private readonly admit: (id: unknown) => boolean
  ) {}

  get size (): number {
    return this.found.size
  }

  /**
   * Takes the document `change` names when it is one more to send: 'full' when it would be but
   * `limit` are found already (the gathering stands before it), 'passed' when it is not one.
   */
  offer (change: Change): 'taken' | 'passed' | 'full' {
    if (!concerns(change, this.project)) return 'passed'
    const text = idText(change.id)
    if (this.found.has(text) || !this.admit(change.id)) return 'passed'
    if (this.found.size === this.limit) return 'full'
    this.found.set(text, change.id)
    this.committedAt.push(change.committedAt)
    return 'taken'
  }

  /** What was found, the gathering standing at `point`. */
  at (point: StreamPoint): Gathered {
    return { lost: false, ids: [...this.found.values()], point, committedAt: this.committedAt }
  }
}

function newEpoch (): string {
  return randomBytes(6).toString('base64url')
}

export class RecentChanges {
  private entries: Entry[] = []
  private readonly keys = new Map<string, number>()
  /** The sequence number of entries[0]; entries hold firstSeq … lastSeq. */
  private firstSeq = 1
  private lastSeq = 0
  private epoch = newEpoch()
  /** Where the stream stands: past every change kept; undefined until it has answered. */
  resumeToken: Document | undefined

  /** How many changes are kept (at least; up to a quarter more before the oldest are dropped). */
  constructor (private readonly capacity: number) {}

  add (change: Change): Entry {
    const entry: Entry = { ...change, seq: ++this.lastSeq }
    this.entries.push(entry)
    this.keys.set(entry.key, entry.seq)
    this.resumeToken = entry.token
    // The oldest are dropped a quarter of the capacity at a time, not one by one: a splice moves
    // every entry kept, and one per change made a burst of changes quadratic.
    if (this.entries.length > this.capacity + Math.ceil(this.capacity / 4)) {
      const dropped = this.entries.splice(0, this.entries.length - this.capacity)
      for (const old of dropped) this.keys.delete(old.key)
      this.firstSeq = (this.entries[0] as Entry).seq
    }
    return entry
  }

  /** Forgets every change: tokens issued before can no longer be found here. */
  reset (): void {
    this.entries = []
    this.keys.clear()
    this.epoch = newEpoch()
    this.firstSeq = this.lastSeq + 1
    this.resumeToken = undefined
  }

  /** The newest point: behind every change the stream has brought. */
  position (): StreamPoint {
    if (this.resumeToken === undefined) throw new Error('the change hub has no position before its stream answers')
    const last = this.entries[this.entries.length - 1]
    const point: StreamPoint = { resumeToken: this.resumeToken, epoch: this.epoch, seq: this.lastSeq }
    if (last !== undefined) point.after = last.key
    return point
  }

  /** The newest change's sequence number (the numbers go on across a reset). */
  get newest (): number {
    return this.lastSeq
  }

  /**
   * Whether a change that concerns `project` (any when undefined), or one that lost the history,
   * came after sequence number `mark`; true when the recent changes no longer reach back to it.
   */
  changedSince (mark: number, project: string | undefined): boolean {
    if (mark < this.firstSeq - 1) return true
    for (let i = mark + 1 - this.firstSeq; i < this.entries.length; i++) {
      const entry = this.entries[i] as Entry
      if (entry.lost || concerns(entry, project)) return true
    }
    return false
  }

  /** The sequence number `point` stands after, when the recent changes reach back to it. */
  locate (point: StreamPoint): number | undefined {
    if (point.epoch === this.epoch && point.seq !== undefined &&
      point.seq >= this.firstSeq - 1 && point.seq <= this.lastSeq) return point.seq
    return point.after === undefined ? undefined : this.keys.get(point.after)
  }

  /**
   * The ids of the documents changed after `from` that concern `project` (every change when
   * undefined), at most `limit` distinct ones, and the point behind the last change looked at.
   */
  gather (from: number, project: string | undefined, limit: number, admit: (id: unknown) => boolean): Gathered {
    const gathering = new Gathering(project, limit, admit)
    let seq = from
    for (let i = from + 1 - this.firstSeq; i < this.entries.length; i++) {
      const entry = this.entries[i] as Entry
      if (entry.lost) return { lost: true }
      if (gathering.offer(entry) === 'full') break
      seq = entry.seq
    }
    return gathering.at(seq === this.lastSeq ? this.position() : this.pointAt(seq))
  }

  /**
   * A point read elsewhere (a stream of its own), after the change keyed `at.after`: placed among
   * the recent changes when they hold that change, else as it is.
   */
  join (at: StreamPoint): StreamPoint {
    const seq = at.after === undefined ? undefined : this.keys.get(at.after)
    return seq === undefined
      ? { resumeToken: at.resumeToken, ...(at.after === undefined ? {} : { after: at.after }) }
      : { ...at, epoch: this.epoch, seq }
  }

  private pointAt (seq: number): StreamPoint {
    if (seq < this.firstSeq) {
      // Nothing was looked at: the point is the one asked about, before the first kept change.
      const first = this.entries[0] as Entry
      return { resumeToken: first.token, epoch: this.epoch, seq }
    }
    const entry = this.entries[seq - this.firstSeq] as Entry
    return { resumeToken: entry.token, after: entry.key, epoch: this.epoch, seq }
  }
}
