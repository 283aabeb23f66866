/**
 * A set of objects that stay in it only while in use (the responses being answered, the
 * driver's sessions of the operations running), for owners that live as long as the process.
 *
 * Not a `Set`, for the garbage collector's sake. When V8 rehashes a Set's table (it does so
 * every few dozen adds when entries come and go), the table left behind keeps its entries and
 * a pointer to the new table. Once one table of the chain is in the old generation, every
 * later table and every object they held outlives the young-generation collections until the
 * next full one: each request's session or response, and all they reach, is copied and then
 * promoted. Under load that made most of the service's promoted bytes and its full
 * collections (docs/performance.md, "A steady tail"). Here an object is an array slot, and
 * its index is kept on the object under a key of this set: adding and removing write no
 * table, and nothing removed stays referenced.
 */
export class SlotSet<T extends object> implements Iterable<T> {
  private readonly items: T[] = []
  private readonly slot = Symbol('SlotSet index')

  get size (): number {
    return this.items.length
  }

  private indexOf (item: T): number {
    const index = (item as Record<symbol, number | undefined>)[this.slot]
    return index !== undefined && index >= 0 && this.items[index] === item ? index : -1
  }

  has (item: T): boolean {
    return this.indexOf(item) >= 0
  }

  add (item: T): this {
    if (this.indexOf(item) < 0) {
      (item as Record<symbol, number>)[this.slot] = this.items.length
      this.items.push(item)
    }
    return this
  }

  delete (item: T): boolean {
    const index = this.indexOf(item)
    if (index < 0) return false
    const last = this.items.pop() as T
    if (last !== item) {
      this.items[index] = last;
      (last as Record<symbol, number>)[this.slot] = index
    }
    (item as Record<symbol, number>)[this.slot] = -1
    return true
  }

  clear (): void {
    for (const item of this.items) (item as Record<symbol, number>)[this.slot] = -1
    this.items.length = 0
  }

  /** Over a copy: what is deleted while iterating (a session ending as it is closed) changes nothing. */
  [Symbol.iterator] (): Iterator<T> {
    return [...this.items][Symbol.iterator]()
  }
}
