// The stand-in's oplog: every write, in order, under a cluster time, for change streams to read.
// Like a replica set's oplog it is bounded: the oldest entries are dropped, and a stream that
// needs one of them has lost its history (ChangeStreamHistoryLost). Its majority commit point is
// the latest write, unless the hazards make it lag (hazards.ts).
import { Timestamp } from 'bson'
import type { Doc } from './storage.js'

export interface UpdateDescription {
  updatedFields: Doc
  removedFields: string[]
  truncatedArrays: Doc[]
}

export type OplogOperation = 'insert' | 'update' | 'replace' | 'delete' | 'drop' | 'dropDatabase' | 'noop'

export interface OplogEntry {
  /** The cluster time, as a number for ordering (`Timestamp.toBigInt()`). */
  at: bigint
  ts: Timestamp
  wall: Date
  op: OplogOperation
  db: string
  /** Missing for `dropDatabase` and the no-op entry that starts the oplog. */
  coll?: string
  documentKey?: Doc
  /** The document before the write (update, replace, delete), when the collection records images. */
  pre?: Doc
  /** The document after the write (insert, replace always; update when the collection records images). */
  post?: Doc
  updateDescription?: UpdateDescription
}

export type NewEntry = Omit<OplogEntry, 'at' | 'ts' | 'wall'>

type Waiter = () => void

export class Oplog {
  private entries: OplogEntry[] = []
  /** Index in `entries` of the oldest entry kept. */
  private head = 0
  private last: bigint
  /** Everything at or before this cluster time is gone (at first: all that came before the start). */
  private droppedTo: bigint
  private readonly waiters = new Set<Waiter>()
  /** The majority commit point while it lags the latest write; undefined while it is the latest write. */
  private committed: bigint | undefined
  /** How many of the latest writes keep their pre-images (and the post-images computed from them). */
  imagesKept = Infinity

  constructor (readonly capacity: number) {
    this.last = 0n
    const start = this.append({ op: 'noop', db: 'admin' })
    this.droppedTo = start.at - 1n
  }

  /** The cluster time of the latest write. */
  get lastTime (): Timestamp {
    return new Timestamp(this.last)
  }

  get lastAt (): bigint {
    return this.last
  }

  /** The majority commit point (manual: Read Concern "majority"): what change streams may return. */
  get majorityAt (): bigint {
    return this.committed ?? this.last
  }

  get lagging (): boolean {
    return this.committed !== undefined
  }

  /** From now on the majority point stays where it is until `commit` moves it. */
  lagMajority (): void {
    this.committed ??= this.last
  }

  /** Moves a lagging majority point on to `to` (never back, never past the latest write). */
  commit (to: bigint): void {
    if (this.committed === undefined) return
    const next = to < this.last ? to : this.last
    if (next <= this.committed) return
    this.committed = next
    this.wake()
  }

  get lastWall (): Date {
    return this.entries[this.entries.length - 1]?.wall ?? new Date()
  }

  /**
   * A new cluster time: the wall clock's seconds, and an increment that orders the writes of one
   * second, as mongod's oplog timestamps do (manual: "BSON Types", Timestamps).
   */
  tick (): Timestamp {
    const seconds = BigInt(Math.floor(Date.now() / 1000))
    const lastSeconds = this.last >> 32n
    this.last = seconds > lastSeconds ? (seconds << 32n) | 1n : this.last + 1n
    return new Timestamp(this.last)
  }

  append (entry: NewEntry): OplogEntry {
    const ts = this.tick()
    const full: OplogEntry = { ...entry, at: ts.toBigInt(), ts, wall: new Date() }
    this.entries.push(full)
    while (this.entries.length - this.head > this.capacity) {
      this.droppedTo = (this.entries[this.head] as OplogEntry).at
      this.head++
    }
    // Compacted now and then, so that dropping the oldest entry is not a shift of the whole array.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head)
      this.head = 0
    }
    if (this.entries.length - this.head > this.imagesKept) {
      expireImages(this.entries[this.entries.length - 1 - this.imagesKept] as OplogEntry)
    }
    if (this.committed === undefined) this.wake()
    return full
  }

  private wake (): void {
    for (const wake of [...this.waiters]) wake()
  }

  /** Whether entries at or after this cluster time have been dropped (or came before the start). */
  lost (from: bigint): boolean {
    return from <= this.droppedTo
  }

  /** At most `count` kept entries with a cluster time at or after `from` and at or before `upTo`, oldest first. */
  from (from: bigint, count = Infinity, upTo = this.majorityAt): OplogEntry[] {
    const start = this.indexOf(from)
    return this.entries.slice(start, Math.max(start, Math.min(this.indexOf(upTo + 1n), start + count)))
  }

  /** The entry written at exactly this cluster time, if it is still kept. */
  at (at: bigint): OplogEntry | undefined {
    const entry = this.entries[this.indexOf(at)]
    return entry?.at === at ? entry : undefined
  }

  /** Where the first kept entry at or after `from` is (binary search: cluster times only grow). */
  private indexOf (from: bigint): number {
    let low = this.head
    let high = this.entries.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((this.entries[middle] as OplogEntry).at < from) low = middle + 1
      else high = middle
    }
    return low
  }

  /**
   * Resolves when the majority point next moves (at the next append, unless it lags), after
   * `ms`, or when `signal` aborts, whichever comes first.
   */
  async nextCommit (ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.waiters.delete(done)
        signal.removeEventListener('abort', done)
        resolve()
      }
      // A timer longer than 2^31 - 1 ms would fire at once: such a wait has no timer.
      const timer = ms < 2 ** 31 ? setTimeout(done, Math.max(0, ms)) : undefined
      this.waiters.add(done)
      signal.addEventListener('abort', done, { once: true })
    })
  }
}

/**
 * A pre-image gone (changeStreamOptions.preAndPostImages.expireAfterSeconds): mongod computes an
 * update's post-image from it (DocumentSourceChangeStreamAddPostImage::generatePostImage), so that
 * goes too; the document of an insert or a replace is the oplog entry's own and stays.
 */
function expireImages (entry: OplogEntry): void {
  delete entry.pre
  if (entry.op === 'update') delete entry.post
}
