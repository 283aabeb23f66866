// A Db for the tests of one-command reads (find-page.ts, count-matching.ts): its `command`
// answers as the test says and records what it was sent; its collections are the test's own.
import { ReadPreference, type Db, type Document } from 'mongodb'

export interface FakeDbOptions {
  /** The client's retryReads (true by default). */
  retryReads?: boolean
  /** What `db.collection(name)` gives: by default it throws, for a read that must need no collection. */
  collection?: (name: string) => unknown
}

export function fakeDb (
  answer: (command: Document, call: number) => Document,
  { retryReads = true, collection = () => { throw new Error('no cursor should be needed') } }: FakeDbOptions = {}
): { db: Db, sent: Document[] } {
  const sent: Document[] = []
  const fake = {
    readPreference: ReadPreference.primary,
    readConcern: undefined,
    client: { options: { retryReads } },
    command: async (command: Document) => {
      sent.push(command)
      return answer(command, sent.length)
    },
    collection
  }
  return { db: fake as unknown as Db, sent }
}
