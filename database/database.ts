// What the service knows of its database, as the `fastify.database` decorator gives it
// (plugins/mongodb.ts makes it): the current client, deadlines, timing and readiness.
import type { Collection, Db, Document, MongoClient } from 'mongodb'
import type { ClientReplacement } from './client-replacement.js'
import type { Shim } from './driver-shims.js'
import type { DatabaseReadiness } from './readiness.js'

/** Hears of a timed command: its name, how it ended, and how long it took. */
export type CommandListener = (command: string, outcome: 'success' | 'failure', seconds: number) => void

/** What shares one database deadline (a request, set on its arrival; otherwise 0 until its first bounded call). */
export interface SharedBudget { databaseDeadline: number }

export interface Database {
  /** The current client: read it here, never from `fastify.mongo`, which keeps the first. */
  client: () => MongoClient
  /** A collection of the current client (cached per client). */
  collection: (name: string) => Collection<Document>
  /** The database of the current client. */
  db: () => Db
  /**
   * Runs a request's database work with a signal that aborts it once the request has had its
   * time (QUERY_TIMEOUT_MS + the client's margin): server selection, checkout and the wait for
   * replies. An operation the server refuses leaves the others running; any other failure aborts
   * them. Calls given the same `budget` share one deadline: a request's counts from its arrival,
   * so that a request that reads in steps (its project, then its page) answers within one budget.
   */
  bounded: <T>(work: (signal: AbortSignal) => Promise<T>, budget?: SharedBudget) => Promise<T>
  /**
   * Runs one database command, timed for the listeners (the metrics): from the driver call to
   * its answer, server selection and pool checkout included.
   */
  timed: <T>(command: string, work: () => Promise<T>) => Promise<T>
  /** Adds a listener of every timed command. */
  onCommand: (listener: CommandListener) => void
  /** Calls `attach` with the client now and with every client that replaces it (metrics listen to them). */
  observe: (attach: (client: MongoClient) => void) => void
  /** Whether the service may take requests (what /ready reports), from its pings of the database. */
  readonly readiness: DatabaseReadiness
  /** The replacement of a client stuck after an outage. */
  readonly replacement: ClientReplacement
  /** The driver shims in use (database/driver-shims.ts). */
  readonly shims: ReadonlySet<Shim>
}
