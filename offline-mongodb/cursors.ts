import { Long, calculateObjectSize } from 'bson'
import type { StreamSpec } from './change-stream-spec.js'
import type { StreamPosition } from './resume-token.js'
import type { Doc } from './storage.js'

/** A change stream's cursor (change-streams.ts reads and moves it). */
export interface StreamCursor {
  id: Long
  spec: StreamSpec
  /** Where the next batch starts. */
  position: StreamPosition
  /** The postBatchResumeToken last answered: it never moves back, nor past what was read. */
  token: Doc
  /** Aborted by killCursors (or the server closing), which ends a waiting getMore. */
  killed: AbortController
  busy: boolean
}

/**
 * A batch is "the lesser of batchSize documents or 16 MiB worth of documents", and holds at
 * least one (https://www.mongodb.com/docs/manual/reference/method/cursor.batchSize/).
 */
const BATCH_BYTES = 16 * 1024 * 1024

/** Where a batch of at most `count` documents starting at `from` ends. */
function batchEnd (docs: Doc[], from: number, count: number): number {
  const last = Math.min(docs.length, from + count)
  let end = from
  let bytes = 0
  while (end < last) {
    bytes += calculateObjectSize(docs[end] as Doc)
    if (end > from && bytes > BATCH_BYTES) break
    end++
  }
  return end
}

interface OpenCursor { ns: string, docs: Doc[], position: number }

/** Server-side cursors: what a find or aggregate did not return in its first batch, and change streams. */
export class Cursors {
  private readonly open = new Map<string, OpenCursor>()
  /** Change stream cursors, by id; their getMore reads the oplog (change-streams.ts). */
  readonly streams = new Map<string, StreamCursor>()
  private nextId = BigInt(1 + Math.floor(Math.random() * 1e9))

  newId (): Long {
    return Long.fromBigInt(this.nextId++)
  }

  /**
   * Answers a first batch; the rest stays open under an Int64 id (0 when exhausted, or when
   * `singleBatch` closes the cursor after its first batch).
   */
  firstBatch (ns: string, docs: Doc[], batchSize: number | undefined, singleBatch = false): Doc {
    const end = batchEnd(docs, 0, batchSize ?? 101)
    const firstBatch = docs.slice(0, end)
    let id = Long.ZERO
    if (docs.length > end && !singleBatch) {
      id = this.newId()
      this.open.set(id.toString(), { ns, docs, position: end })
    }
    return { cursor: { firstBatch, id, ns }, ok: 1 }
  }

  nextBatch (id: Long, ns: string, batchSize: number | undefined): Doc | undefined {
    const cursor = this.open.get(id.toString())
    if (cursor === undefined || cursor.ns !== ns) return undefined
    const end = batchEnd(cursor.docs, cursor.position, batchSize === undefined || batchSize <= 0 ? Infinity : batchSize)
    const nextBatch = cursor.docs.slice(cursor.position, end)
    cursor.position += nextBatch.length
    let replyId = id
    if (cursor.position >= cursor.docs.length) {
      this.open.delete(id.toString())
      replyId = Long.ZERO
    }
    return { cursor: { nextBatch, id: replyId, ns }, ok: 1 }
  }

  kill (ids: Long[]): Doc {
    const cursorsKilled: Long[] = []
    const cursorsNotFound: Long[] = []
    for (const id of ids) {
      const stream = this.streams.get(id.toString())
      // A getMore waiting on a killed change stream ends at once (CursorKilled).
      stream?.killed.abort()
      if (this.streams.delete(id.toString()) || this.open.delete(id.toString())) cursorsKilled.push(id)
      else cursorsNotFound.push(id)
    }
    return { cursorsKilled, cursorsNotFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 }
  }

  closeAll (): void {
    this.open.clear()
    for (const stream of this.streams.values()) stream.killed.abort()
    this.streams.clear()
  }
}
