import { Long } from 'bson'
import type { Doc } from './storage.js'

interface OpenCursor { ns: string, docs: Doc[], position: number }

/** Server-side cursors: what a find or aggregate did not return in its first batch. */
export class Cursors {
  private readonly open = new Map<string, OpenCursor>()
  private nextId = BigInt(1 + Math.floor(Math.random() * 1e9))

  /** Answers a first batch; the rest stays open under an Int64 id (0 when exhausted). */
  firstBatch (ns: string, docs: Doc[], batchSize: number | undefined): Doc {
    const size = batchSize ?? 101
    const firstBatch = docs.slice(0, size)
    let id = Long.ZERO
    if (docs.length > size) {
      id = Long.fromBigInt(this.nextId++)
      this.open.set(id.toString(), { ns, docs, position: size })
    }
    return { cursor: { firstBatch, id, ns }, ok: 1 }
  }

  nextBatch (id: Long, ns: string, batchSize: number | undefined): Doc | undefined {
    const cursor = this.open.get(id.toString())
    if (cursor === undefined || cursor.ns !== ns) return undefined
    const end = batchSize === undefined || batchSize <= 0 ? cursor.docs.length : cursor.position + batchSize
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
      if (this.open.delete(id.toString())) cursorsKilled.push(id)
      else cursorsNotFound.push(id)
    }
    return { cursorsKilled, cursorsNotFound, cursorsAlive: [], cursorsUnknown: [], ok: 1 }
  }

  closeAll (): void {
    this.open.clear()
  }
}
