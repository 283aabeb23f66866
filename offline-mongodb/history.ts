// What a read as of an older cluster time needs while the majority commit point lags the latest
// write (hazards): each write since that point, with what it replaced, so that a majority read
// sees the collection as it was at that point (manual: Read Concern "majority").
import { keyPart, type Doc } from './storage.js'

/** A document inserted (no `before`), changed, or deleted (no `after`; `index` is where it stood). */
export interface DocumentChange { at: bigint, ns: string, before?: Doc, after?: Doc, index?: number }
/** A collection dropped, with the documents it held. */
export interface CollectionDrop { at: bigint, ns: string, docs: Doc[] }
export type Change = DocumentChange | CollectionDrop

const isDrop = (change: Change): change is CollectionDrop => 'docs' in change

export class History {
  /** Oldest first, as the oplog orders them. */
  private changes: Change[] = []

  record (change: Change): void {
    this.changes.push(change)
  }

  /** Forgets what no read needs any more: the changes at or before the majority point. */
  forget (upTo: bigint): void {
    const kept = this.after(upTo)
    if (kept > 0) this.changes = this.changes.slice(kept)
  }

  get size (): number {
    return this.changes.length
  }

  /** The documents of `ns` as of cluster time `at`, from `current` (what it holds now) by undoing what came after. */
  documentsAt (ns: string, current: Doc[], at: bigint): Doc[] {
    let docs = current
    for (let i = this.changes.length - 1; i >= this.after(at); i--) {
      const change = this.changes[i] as Change
      if (change.ns !== ns) continue
      if (docs === current) docs = current.slice()
      if (isDrop(change)) {
        docs = change.docs.slice()
        continue
      }
      // The stored documents are never changed in place: `after` is the very object stored.
      const index = change.after === undefined ? -1 : docs.indexOf(change.after)
      if (change.before === undefined) {
        if (index >= 0) docs.splice(index, 1)
      } else if (index >= 0) {
        docs[index] = change.before
      } else {
        docs.splice(Math.min(change.index ?? docs.length, docs.length), 0, change.before)
      }
    }
    return docs
  }

  /** The document of `ns` with this `_id` as of cluster time `at`; `live` finds it as it is now. */
  documentAt (ns: string, id: unknown, at: bigint, live: () => Doc | undefined): Doc | undefined {
    const key = keyPart(id)
    for (let i = this.after(at); i < this.changes.length; i++) {
      const change = this.changes[i] as Change
      if (change.ns !== ns) continue
      // The first change after `at` that touched the document says what it was before.
      if (isDrop(change)) return change.docs.find((doc) => keyPart(doc._id) === key)
      const touched = change.before ?? change.after
      if (touched !== undefined && keyPart(touched._id) === key) return change.before
    }
    return live()
  }

  /** The index of the first change after cluster time `at` (binary search: they are in order). */
  private after (at: bigint): number {
    let low = 0
    let high = this.changes.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((this.changes[middle] as Change).at <= at) low = middle + 1
      else high = middle
    }
    return low
  }
}
