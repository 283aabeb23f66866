/**
 * A set of objects that stay in it only while in use (the responses being answered, the
 * driver's sessions of the operations running), for owners that live as long as the process.
 * Not a `Set`: its rehashed tables keep removed objects alive past the young-generation
 * collections (docs/performance.md, "Why it is fast" ("A steady tail")). Here an object is an array
 * slot, its index kept on the object under a key of this set: adding and removing write no
 * table, and nothing removed stays referenced.
 */
export class SlotSet<T extends object> implements Iterable<T> {
  private readonly items: T[] = []
  private readonly slot = Symbol('SlotSet index')
  /** Objects that cannot take a property (frozen, sealed, not extensible): in a plain Set. */
  private readonly others = new Set<T>()

  get size (): number {
    return this.items.length + this.others.size
  }

  private indexOf (item: T): number {
    const index = (item as Record<symbol, number | undefined>)[this.slot]
    return index !== undefined && index >= 0 && this.items[index] === item ? index : -1
  }

  has (item: T): boolean {
    return this.indexOf(item) >= 0 || this.others.has(item)
  }

  add (item: T): this {
    if (!Object.isExtensible(item)) this.others.add(item)
    else if (this.indexOf(item) < 0) {
      (item as Record<symbol, number>)[this.slot] = this.items.length
      this.items.push(item)
    }
    return this
  }

  delete (item: T): boolean {
    const index = this.indexOf(item)
    if (index < 0) return this.others.delete(item)
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
    this.others.clear()
  }

  /** Over a copy: what is deleted while iterating (a session ending as it is closed) changes nothing. */
  [Symbol.iterator] (): Iterator<T> {
    return [...this.items, ...this.others][Symbol.iterator]()
  }
}
