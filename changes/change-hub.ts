// One change stream per collection and replica, whatever the number of feeds that follow it,
// fanned out in memory (the shape of Kubernetes' watch cache): the recent changes are kept in
// order, so that a feed's next answer is read from them without a stream of its own, and the
// requests that wait are woken when a change of their project comes. A position the recent
// changes do not reach back to (older, or issued before this replica saw it) is read with a
// short stream of its own from the position's resume token (stream-read.ts), which then joins them.
import type { ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { ChangeStream, Document } from 'mongodb'
import { STREAM_OPTIONS, STREAM_PIPELINE, isHistoryLost, isUnreadable, readChange } from './change-events.js'
import { tokenLayoutBroken } from './cluster-time.js'
import { RecentChanges, type Entry, type Gathered, type StreamPoint } from './recent-changes.js'
import { emptyOpening, readFrom, type ReadRecord, type StreamSource } from './stream-read.js'
import { Waiters } from './waiters.js'
import { atMost, within } from '../lib/pause.js'

export interface HubOptions extends StreamSource {
  /** How many recent changes are kept (at least; up to a quarter more before the oldest are dropped). */
  capacity: number
  log: FastifyBaseLogger
  /**
   * Hears of an event of a type the feed does not know (skipped: servers add types, change-streams
   * spec), once, as the shared stream takes it in.
   */
  onSkipped?: (type: string) => void
  /** Hears that the stream forgot its changes (history lost, collection dropped, a change unreadable). */
  onReset?: () => void
  /** Hears of a change that can never be read (the stream moved past it; feeds behind it answer 410). */
  onUnreadable?: (error: unknown) => void
}

/** The collection's stream ended with an `invalidate` event (a drop or rename). */
class StreamInvalidated extends Error {}

/** The longest a stream's getMore waits on the server: the stream's position moves at least this often. */
const AWAIT_MS = 1000
/** A getMore the server has not answered this long after its wait and time limit is on a silent connection. */
const SILENT_AFTER_MS = 2000
/** After a failure, the stream is opened again this much later. */
const RETRY_MS = 1000

export class ChangeHub {
  private readonly recent: RecentChanges
  private readonly waiters = new Waiters()
  private stream: ChangeStream | undefined
  private running = false
  private stopped = false
  private loop: Promise<void> | undefined
  private readyWaiters: Array<{ resolve: () => void, reject: (error: unknown) => void }> = []
  private failing = false
  private retryTimer: NodeJS.Timeout | undefined
  private retryWake: (() => void) | undefined

  constructor (private readonly options: HubOptions) {
    this.recent = new RecentChanges(options.capacity)
  }

  /**
   * Resolves when the stream has answered (its position is known); rejects with the failure of an
   * attempt to open it.
   */
  ready (): Promise<void> {
    if (this.running) return Promise.resolve()
    if (this.stopped) return Promise.reject(new Error('the change feed is shutting down'))
    const waiting = new Promise<void>((resolve, reject) => { this.readyWaiters.push({ resolve, reject }) })
    this.loop ??= this.run()
    // A hub waiting to retry tries again now: a request is waiting on it.
    this.retryWake?.()
    return waiting
  }

  get isRunning (): boolean {
    return this.running
  }

  /** The newest point: behind every change the stream has brought. */
  position (): StreamPoint {
    return this.recent.position()
  }

  /** The sequence number `point` stands after, when the recent changes reach back to it. */
  locate (point: StreamPoint): number | undefined {
    return this.running ? this.recent.locate(point) : undefined
  }

  /** The newest change's sequence number, for changedSince() after a read. */
  mark (): number {
    return this.recent.newest
  }

  /** Whether a change of `project` came after `mark` (RecentChanges.changedSince()). */
  changedSince (mark: number, project: string | undefined): boolean {
    return this.recent.changedSince(mark, project)
  }

  /**
   * Whether changes came after `point` since it was read, `mark` (mark()) taken before that
   * read: a waiting request need not wait. A point the recent changes cannot place (read by a
   * stream of its own) cannot tell a change brought during that read: one of the project's counts.
   */
  movedSince (point: StreamPoint, project: string | undefined, mark: number): boolean {
    const seq = this.locate(point)
    return seq === undefined ? this.changedSince(mark, project) : seq < (this.position().seq ?? seq)
  }

  /** The changes after `from` (a sequence number locate() gave): RecentChanges.gather(). */
  gather (from: number, project: string | undefined, limit: number, admit: (id: unknown) => boolean): Gathered {
    return this.recent.gather(from, project, limit, admit)
  }

  /**
   * The changes after `point`, read by a stream of its own (stream-read.ts), for a point the recent
   * changes do not reach back to.
   */
  async readFrom (
    point: StreamPoint, project: string | undefined, limit: number, admit: (id: unknown) => boolean,
    signal: AbortSignal, softDeadline = Infinity, record?: ReadRecord
  ): Promise<Gathered> {
    return await readFrom(this.options, this.recent, point, project, limit, admit, signal, softDeadline, record)
  }

  /** A point read elsewhere, placed among the recent changes when they hold its last change. */
  join (at: StreamPoint): StreamPoint {
    return this.recent.join(at)
  }

  /** Waiters#wait(): `wake` once at the next change of `project`; returns the function that cancels it. */
  wait (project: string | undefined, wake: () => void, counted = true): () => void {
    return this.waiters.wait(project, wake, counted)
  }

  /** Waiters.nextWake(): the next change of `project`, `until`, the service stopping or the client leaving. */
  async nextWake (
    project: string | undefined, until: number, stopping: (listener: () => void) => () => void, response: ServerResponse
  ): Promise<void> {
    await this.waiters.nextWake(project, until, stopping, response)
  }

  /** How many requests wait on this hub. */
  get waiting (): number {
    return this.waiters.count
  }

  /** Wakes every waiting request (shutdown: each answers with what it has). */
  wakeAll (): void {
    this.waiters.wakeAll()
  }

  private add (event: Document): Entry {
    if (tokenLayoutBroken(event._id as Document | undefined, event.clusterTime)) {
      this.options.log.warn('a change event\'s resume token does not hold its cluster time where expected: ' +
        'feeds no longer take times from tokens (docs/architecture.md, "Reaching into dependencies")')
    }
    const change = readChange(event, this.options.scoped)
    if (change.id === undefined && !change.lost) this.options.onSkipped?.(change.type)
    return this.recent.add(change)
  }

  /** Forgets every change: tokens issued before can no longer be found here. */
  private reset (): void {
    this.options.onReset?.()
    this.recent.reset()
  }

  private settleReady (error?: unknown): void {
    const waiting = this.readyWaiters
    this.readyWaiters = []
    for (const { resolve, reject } of waiting) {
      if (error === undefined) resolve()
      else reject(error)
    }
  }

  /** The stream answers (at `resumeToken`, when it has no event yet): requests that waited for it go on. */
  private following (resumeToken?: Document): void {
    if (resumeToken !== undefined) this.recent.resumeToken = resumeToken
    this.running = true
    if (this.failing) {
      this.options.log.info({ collection: this.options.collection().collectionName },
        'the change feed follows the collection again')
    }
    this.failing = false
    this.settleReady()
    // Requests that waited while it failed look again.
    this.wakeAll()
  }

  private async run (): Promise<void> {
    while (!this.stopped) {
      const resumeAfter = this.recent.resumeToken
      const stream = this.options.collection().watch(STREAM_PIPELINE, {
        ...STREAM_OPTIONS,
        ...(resumeAfter === undefined ? {} : { resumeAfter }),
        batchSize: 1000,
        maxAwaitTimeMS: AWAIT_MS,
        maxTimeMS: this.options.maxTimeMS
      })
      this.stream = stream
      // The opening aggregate's empty batch gives the position; the driver's first tryNext then
      // waits out a getMore (AWAIT_MS) before it returns, and the hub is ready without that wait.
      let first: Promise<unknown> | undefined
      emptyOpening(stream, () => first).then((token) => {
        if (!this.running && this.stream === stream) this.following(token)
      }, () => {})
      try {
        while (!this.stopped) {
          const next = stream.tryNext()
          first ??= next
          // No socket timeout would end it: the stream is opened anew.
          let event = await within(next, AWAIT_MS + this.options.maxTimeMS + SILENT_AFTER_MS,
            () => new Error('the change stream\'s getMore went unanswered'))
          if (this.stopped) break
          const added: Entry[] = []
          let invalidated = false
          while (event !== null) {
            added.push(this.add(event as Document))
            // The collection was dropped or renamed: this stream is over (its cursor closed).
            if ((event as Document).operationType === 'invalidate') invalidated = true
            if (stream.bufferedCount() === 0) break
            event = await stream.tryNext()
          }
          if (stream.resumeToken !== undefined && stream.resumeToken !== null) {
            this.recent.resumeToken = stream.resumeToken as Document
          }
          if (!this.running) this.following()
          if (added.length > 0) this.waiters.wakeFor(added)
          if (invalidated || stream.closed) throw new StreamInvalidated()
        }
      } catch (error) {
        if (this.stopped) break
        this.running = false
        if (error instanceof StreamInvalidated) {
          // A new stream on the collection as it is now; feeds behind the drop meet it and answer 410.
          this.reset()
          continue
        }
        // Unreadable from a fresh stream is no single change: it is retried as any failure.
        if (isUnreadable(error) && resumeAfter !== undefined) {
          // A change no stream can read: this one starts again from now, past it. Feeds behind it
          // meet it when they read from their tokens, and answer 410 (feed-steps.ts).
          this.options.log.error({ collection: this.options.collection().collectionName, err: error },
            'a change of the collection can never be read: the change feed moves past it; ' +
            'feeds behind it answer 410 and list again')
          this.options.onUnreadable?.(error)
          this.reset()
          continue
        }
        const lost = isHistoryLost(error)
        if (lost) this.reset()
        if (!this.failing) {
          this.options.log.warn({ collection: this.options.collection().collectionName, err: error }, lost
            ? 'the change feed lost its place in the database\'s history: feeds behind it answer 410 and list again'
            : 'the change feed cannot follow the collection now; it tries again every second')
        }
        this.failing = true
        this.settleReady(error)
        this.wakeAll()
        await new Promise<void>((resolve) => {
          this.retryWake = resolve
          this.retryTimer = setTimeout(resolve, RETRY_MS)
        })
        this.retryWake = undefined
        clearTimeout(this.retryTimer)
      } finally {
        this.stream = undefined
        // Its killCursors too may meet a silent connection.
        await atMost(stream.close().catch(() => {}), this.options.maxTimeMS)
      }
    }
  }

  /** Closes the stream and wakes every waiting request. */
  async stop (): Promise<void> {
    this.stopped = true
    this.running = false
    this.retryWake?.()
    this.settleReady(new Error('the change feed is shutting down'))
    this.wakeAll()
    await this.stream?.close().catch(() => {})
    await this.loop
  }
}
