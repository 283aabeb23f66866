import { ObjectId } from 'mongodb'

/** mulberry32: a small seeded PRNG, so that the demo data is the same on every run. */
export class SeededRandom {
  private state: number
  private sequence = 0

  constructor (seed: number) {
    this.state = seed >>> 0
  }

  next (): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  int (min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  pick<T> (items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T
  }

  /** `count` distinct items, in the order drawn. */
  sample<T> (items: readonly T[], count: number): T[] {
    const pool = [...items]
    const out: T[] = []
    while (out.length < count && pool.length > 0) {
      out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0] as T)
    }
    return out
  }

  chance (probability: number): boolean {
    return this.next() < probability
  }

  /** An ObjectId whose timestamp is `at`, as if the document had been created then. */
  objectId (at: Date): ObjectId {
    const seconds = Math.floor(at.getTime() / 1000).toString(16).padStart(8, '0')
    const noise = Math.floor(this.next() * 0xffffffff).toString(16).padStart(8, '0')
    const counter = (this.sequence++).toString(16).padStart(8, '0')
    return new ObjectId(seconds + noise + counter)
  }
}
