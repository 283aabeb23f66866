// The hazards: what MongoDB is allowed to do and the stand-in otherwise never does (slow replies,
// change stream batches that end early, a majority commit point behind the latest write, expired
// pre-images), switched on by a seed so that code that leans on the stand-in's ideal timing fails
// here as it would against MongoDB, the same way at every run. README.md, "Hazards".
import { Timestamp } from 'bson'
import { type Change, History } from './history.js'
import type { HazardSettings } from './hazard-options.js'
import type { Oplog } from './oplog.js'
import { seededRandom } from './seeded-random.js'

/** What a test can see and do of a running stand-in's hazards (also through the `offlineHazards` command). */
export interface HazardControls {
  readonly settings: HazardSettings
  /** The majority commit point: what majority reads and change streams see. */
  readonly majorityTime: Timestamp
  /** The latest write's cluster time. */
  readonly latestTime: Timestamp
  /** Commands waiting for the majority point: reads with afterClusterTime, w: "majority" writes. */
  readonly waiting: number
  /** Moves the majority point on to `to` (the latest write without it); returns where it stands. */
  advanceMajority: (to?: Timestamp) => Timestamp
  /** Stops the majority point where it is, until advanceMajority or releaseMajority. */
  holdMajority: () => void
  /** Lets the majority point catch up again after majorityLagMs. */
  releaseMajority: () => void
}

/** The hazards of one server: its majority point, and the history majority reads need. */
export class Hazards implements HazardControls {
  readonly history = new History()
  waiting = 0
  private readonly lag: () => number
  private held: boolean
  private timer: NodeJS.Timeout | undefined

  constructor (readonly settings: HazardSettings, private readonly oplog: Oplog) {
    this.lag = seededRandom(settings.seed, 'majority')
    this.held = settings.majorityLagMs === 'manual'
    if (settings.majorityLagMs !== 0) oplog.lagMajority()
    oplog.imagesKept = settings.imagesKept
  }

  get majorityTime (): Timestamp {
    return new Timestamp(this.oplog.majorityAt)
  }

  get latestTime (): Timestamp {
    return this.oplog.lastTime
  }

  /** Each write, as it is made: kept for majority reads while the majority point is behind it. */
  wrote (change: Change): void {
    if (!this.oplog.lagging) return
    this.history.record(change)
    this.schedule()
  }

  advanceMajority (to?: Timestamp): Timestamp {
    this.oplog.commit(to === undefined ? this.oplog.lastAt : to.toBigInt())
    this.history.forget(this.oplog.majorityAt)
    return this.majorityTime
  }

  holdMajority (): void {
    this.oplog.lagMajority()
    this.held = true
    clearTimeout(this.timer)
    this.timer = undefined
  }

  releaseMajority (): void {
    this.held = false
    this.schedule()
  }

  /** Whether the majority point reached `at` before `deadline` (ms since the epoch); ShutdownInProgress aborts. */
  async untilMajority (at: bigint, deadline: number, signal: AbortSignal): Promise<boolean> {
    this.waiting++
    try {
      while (this.oplog.majorityAt < at) {
        const left = deadline - Date.now()
        if (left <= 0 || signal.aborted) return false
        await this.oplog.nextCommit(left, signal)
      }
      return true
    } finally {
      this.waiting--
    }
  }

  close (): void {
    clearTimeout(this.timer)
  }

  /** One catch-up at a time: it takes whatever was written before it fires. */
  private schedule (): void {
    const lag = this.settings.majorityLagMs
    if (this.held || lag === 'manual' || this.timer !== undefined || this.oplog.majorityAt >= this.oplog.lastAt) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.advanceMajority()
    }, Math.floor(this.lag() * (lag + 1)))
    this.timer.unref()
  }
}

/** The dice of one connection, drawn in the order of its commands (one stream per purpose). */
export class ConnectionHazards {
  private readonly delays: () => number
  private readonly batches: () => number

  constructor (private readonly settings: HazardSettings, connectionId: number) {
    this.delays = seededRandom(settings.seed, 'reply delay', connectionId)
    this.batches = seededRandom(settings.seed, 'change stream batch', connectionId)
  }

  /** How long the next reply waits before it is sent, in ms. */
  replyDelay (): number {
    const max = this.settings.maxReplyDelayMs
    return max === 0 ? 0 : Math.floor(this.delays() * (max + 1))
  }

  /**
   * Where the next change stream batch ends: undefined, where it would; 0, empty at once; n, after at most n
   * events.
   */
  batchCut (): number | undefined {
    const roll = this.batches()
    if (roll < this.settings.emptyBatches) return 0
    if (roll < this.settings.emptyBatches + this.settings.shortBatches) return 1 + Math.floor(this.batches() * 3)
    return undefined
  }
}
