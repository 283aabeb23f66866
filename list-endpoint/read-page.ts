// How a list reads a page: one command for the page (and the project, when not remembered), and
// what a next page's cursor is made of.
import type { FastifyInstance } from 'fastify'
import type { ObjectId } from 'mongodb'
import { EXACT_VALUES } from './cursor.js'
import { valueAt } from './keyset.js'
import { decodeFields, type Page } from './bson-page.js'
import { findPage, findProjectPage, type PageOptions, type PageQuery } from './find-page.js'

/**
 * Whether the project exists; run beside the list (which the project scopes anyway) when not
 * remembered.
 */
export async function projectExists (
  fastify: FastifyInstance, id: ObjectId, options: { maxTimeMS: number, signal: AbortSignal }
): Promise<boolean> {
  return await fastify.database.timed('find', async () =>
    await fastify.database.collection('projects').findOne({ _id: id }, { ...options, projection: { _id: 1 } })) !== null
}

const NO_DOCUMENTS: Page = { bytes: Buffer.alloc(0), starts: [] }

/**
 * The page, and whether its project exists (`known`: true when remembered or unscoped,
 * undefined when the database must say). A project not remembered is looked up in the page's
 * own command (one connection, one round trip); `limit=0` reads no page, only the project.
 */
export function readPage (
  fastify: FastifyInstance, collection: string, projectId: ObjectId, known: boolean | undefined, countOnly: boolean,
  query: PageQuery, options: PageOptions
): Promise<PageRead> {
  if (countOnly) {
    return known !== undefined
      ? Promise.resolve({ exists: known, page: NO_DOCUMENTS })
      : projectExists(fastify, projectId, options).then((exists) => ({ exists, page: NO_DOCUMENTS }))
  }
  const db = fastify.database.db()
  if (known === undefined) {
    return fastify.database.timed('aggregate', () => findProjectPage(db, collection, projectId, query, options))
  }
  return fastify.database.timed('find', () => findPage(db, collection, query, options))
    .then((page) => ({ exists: true, page }))
}

/** What a list reads: its page, whether its project exists, and the count when asked. */
export interface PageRead { exists: boolean, page: Page, total?: number }

/** The values of the sort keys of the page's document `index`, decoded as stored (dotted keys included). */
export function sortValues (page: Page, index: number, sortKeys: string[]): unknown[] {
  const doc = decodeFields(page, index, [...new Set(sortKeys.map((key) => key.split('.')[0] as string))], EXACT_VALUES)
  return sortKeys.map((key) => valueAt(doc, key))
}
