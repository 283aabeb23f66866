// Which history a feed token belongs to: the UUID MongoDB gives a collection when it is created
// (listCollections' `info.uuid`, also through mongos). A database replaced under the service
// (stopped, a fresh one started and seeded at the same address), or a collection dropped and
// created again, has other UUIDs: a token of the old one is 410 at once, where a resume token
// alone could be taken for a position of the new history (the stand-in did; a real server may
// too, until it meets the position: ChangeStreamFatalError 280). Resharding gives a collection a
// new UUID too: its followers list again, nothing is lost.
import type { CheckedDatabase } from './availability.js'

/** How long a collection's identity is kept before it is asked again. */
export const IDENTITY_TTL_MS = 10_000

export class CollectionIdentities {
  private readonly known = new Map<string, { id: Promise<string | null>, until: number }>()

  constructor (
    private readonly database: Pick<CheckedDatabase, 'db' | 'timed'>,
    private readonly maxTimeMS: number,
    private readonly now: () => number = Date.now
  ) {}

  /**
   * The collection's UUID in hex, or null while it does not exist; asked within the deadline of
   * `signal`, as every command is (the requests that join it share that deadline).
   */
  of (collection: string, signal: AbortSignal): Promise<string | null> {
    const cached = this.known.get(collection)
    if (cached !== undefined && cached.until > this.now()) return cached.id
    const options = { nameOnly: false, maxTimeMS: this.maxTimeMS, signal }
    const id = this.database
      .timed('listCollections', () => this.database.db().listCollections({ name: collection }, options).toArray())
      .then(([info]) => {
        const uuid = (info as { info?: { uuid?: { toString: (encoding: 'hex') => string } } } | undefined)?.info?.uuid
        return uuid === undefined ? null : uuid.toString('hex')
      })
    const entry = { id, until: this.now() + IDENTITY_TTL_MS }
    this.known.set(collection, entry)
    id.catch(() => { if (this.known.get(collection) === entry) this.known.delete(collection) })
    return id
  }

  /** Asks again at the next use (the collection's stream lost its history, or was invalidated). */
  forget (collection: string): void {
    this.known.delete(collection)
  }
}
