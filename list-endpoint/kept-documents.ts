// The JSON of documents lately written, kept beside their BSON: a document read again with the
// same bytes gets the same JSON copied, not written again (a list's hot documents are read by
// request after request). Only byte equality reuses, so an answer is always what the transcoder
// would write for the bytes the database sent now; a document with a value left out is not kept
// (every answer that carries it reports it again).
//
// The entries lie one after the other in a single block, written round like a ring: the oldest
// are written over first, and nothing is allocated per document (an object per entry, as a
// general cache keeps, makes a page of new documents much costlier to write; docs/performance.md,
// the table "BSON to JSON body", column "new / without keeping", has what the ring costs them).
import { int32At } from './bson-elements.js'
import { leadingObjectIdAt } from './bson-plan.js'
import type { Out } from './json-out.js'

// An entry: its BSON's length, its JSON's length, its kind's tag (int32 each), the BSON, the JSON.
const HEADER = 12
// A document larger than this is written every time: a few would push out many small ones.
const LARGEST_KEPT = 16 * 1024
/** Slots of the ids written once lately (a power of two). */
export const SEEN = 4096

export class KeptDocuments {
  private block: Buffer | undefined
  private head = 0
  /** Where each key's entry starts. */
  private readonly startOf = new Map<number, number>()
  // The entries in the order written (oldest from `first`), to forget those written over.
  private keys: number[] = []
  private starts: number[] = []
  private first = 0
  private readonly tags = new WeakMap<object, number>()
  private kinds = 0
  private readonly seen = new Int32Array(SEEN)
  /** Documents copied from what was kept, and documents looked for and written again. */
  reused = 0
  written = 0

  constructor (private readonly capacity: number) {}

  /**
   * The tag of a kind's documents: the same `_id` in two kinds is two documents, while a kind's
   * list and its feed write the same JSON for the same bytes and share theirs.
   */
  tagOf (schema: object): number {
    let tag = this.tags.get(schema)
    if (tag === undefined) {
      tag = ++this.kinds
      this.tags.set(schema, tag)
    }
    return tag
  }

  /**
   * The key of the document at `at` when its first element is an ObjectId `_id`, else undefined:
   * the id's bytes and the tag mixed into a small integer, a Map's quickest key. Two documents
   * whose keys meet only push each other out: a copy needs the same tag and the same bytes.
   */
  keyOf (tag: number, buf: Buffer, at: number): number | undefined {
    if (!leadingObjectIdAt(buf, at)) return undefined
    // The time and the counter (the last int32) vary most; below 2^30, a key is a small integer
    // (a Smi) on every V8 build, pointer compression or not.
    return (Math.imul(int32At(buf, at + 9) ^ tag, 0x9e3779b1) ^ Math.imul(int32At(buf, at + 13), 0x85ebca6b) ^
      int32At(buf, at + 17)) >>> 2
  }

  /** Copies the JSON kept for exactly the bytes of the document at `at` into `out`; false when none is. */
  reuse (out: Out, tag: number, key: number, buf: Buffer, at: number): boolean {
    const start = this.startOf.get(key)
    const block = this.block
    const length = int32At(buf, at)
    if (start === undefined || block === undefined || int32At(block, start) !== length ||
      int32At(block, start + 8) !== tag ||
      block.compare(buf, at, at + length, start + HEADER, start + HEADER + length) !== 0) {
      this.written++
      return false
    }
    const json = start + HEADER + length
    out.span(block, json, json + int32At(block, start + 4))
    this.reused++
    return true
  }

  /**
   * Keeps the document at `at` with its JSON, `json[from…to]`, the second time in a row it is
   * written: a document read once (a walk through a whole collection) costs no copy.
   */
  keep (tag: number, key: number, buf: Buffer, at: number, json: Buffer, from: number, to: number): void {
    const length = int32At(buf, at)
    const size = HEADER + length + to - from
    if (length > LARGEST_KEPT || size > this.capacity) return
    // The low bytes of the _id's counter (its last two) pick a slot; the time and the whole
    // counter check it (a bulk insert makes ids of one second that differ only in the counter).
    const slot = ((buf[at + 19] as number) << 8 | (buf[at + 20] as number)) & (SEEN - 1)
    const mark = (int32At(buf, at + 9) ^ int32At(buf, at + 17)) | 1
    if (this.seen[slot] !== mark) {
      this.seen[slot] = mark
      return
    }
    this.seen[slot] = 0
    this.block ??= Buffer.allocUnsafeSlow(this.capacity)
    if (this.head + size > this.capacity) {
      // What is left of the last round is written over from the start: forget it.
      this.forgetFrom(this.capacity)
      this.head = 0
    }
    this.forgetFrom(this.head + size)
    const block = this.block
    const start = this.head
    block.writeInt32LE(length, start)
    block.writeInt32LE(to - from, start + 4)
    block.writeInt32LE(tag, start + 8)
    buf.copy(block, start + HEADER, at, at + length)
    json.copy(block, start + HEADER + length, from, to)
    this.head = start + size
    this.startOf.set(key, start)
    this.keys.push(key)
    this.starts.push(start)
  }

  /** Forgets the oldest entries that start from the head up to `end`: they are about to be written over. */
  private forgetFrom (end: number): void {
    const { keys, starts, startOf } = this
    let first = this.first
    while (first < starts.length && (starts[first] as number) >= this.head && (starts[first] as number) < end) {
      const key = keys[first] as number
      // A key written again since has its entry elsewhere.
      if (startOf.get(key) === starts[first]) startOf.delete(key)
      first++
    }
    // The forgotten part of the order is cut off once it is the larger half.
    if (first > 1024 && first * 2 > starts.length) {
      this.keys = keys.slice(first)
      this.starts = starts.slice(first)
      first = 0
    }
    this.first = first
  }

  /** Bytes held for the entries: the block, once a document has been kept. */
  get size (): number {
    return this.block === undefined ? 0 : this.capacity
  }

  /** How many documents are kept. */
  get count (): number {
    return this.startOf.size
  }
}
