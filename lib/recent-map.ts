/**
 * The most recently used entries of a Map (which keeps insertion order): a hit moves the entry
 * to the end, a set past `max` drops the first. A plain Map lookup is cheaper than lru-cache's
 * on the hot paths that use this, and nothing more is needed. A hit only moves its entry once
 * the map is half full: below that nothing is dropped.
 */
export class RecentMap<V> {
  private readonly entries = new Map<string, V>()

  constructor (private readonly max: number) {}

  get (key: string): V | undefined {
    const value = this.entries.get(key)
    if (value !== undefined && this.entries.size > this.max / 2) {
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }

  set (key: string, value: V): void {
    this.entries.set(key, value)
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string)
  }
}
