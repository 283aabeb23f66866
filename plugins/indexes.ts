import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { CollationOptions, IndexDescription } from 'mongodb'
import { collationKey, parseCollation } from '../database/collation.js'
import { DEFAULT_COLLATION } from '../schemas/config.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The list indexes, created once the database first answers. */
    indexes: {
      /** Resolves when the creation under way, if any, has ended (however it ended). */
      settled: () => Promise<void>
    }
  }
}

const scoped = (...keys: Array<Record<string, 1 | -1>>): IndexDescription[] => [
  { key: { project: 1, _id: 1 } },
  ...keys.map((key) => ({ key: { project: 1, ...key, _id: 1 } as Record<string, 1 | -1> }))
]

/** The indexes the common lists need, by collection; `name` serves `sort=+name` in the service's collation. */
export const INDEX_KEYS: Record<string, IndexDescription[]> = {
  projects: [{ key: { public: 1, _id: 1 } }, { key: { name: 1, _id: 1 } }],
  activities: scoped({ category: 1 }, { name: 1 }),
  categories: scoped({ name: 1 }),
  places: scoped({ name: 1 }),
  sessions: scoped({ start: 1 }, { name: 1 }),
  stewards: scoped({ name: 1 }),
  teams: scoped({ name: 1 }),
  registrations: scoped({ user: 1 }, { 'sessionsSubscriptions.session': 1 }, { name: 1 })
}

/** MongoDB's own name for an index of these keys (`project_1__id_1`). */
const defaultName = (key: Record<string, unknown>): string =>
  Object.entries(key).map(([field, direction]) => `${field}_${String(direction)}`).join('_')

/**
 * The indexes in a collation (database/collation.ts): a query uses an index for strings only
 * when both have the same collation (manual: Collation, "Collation and Index Use"). Binary order
 * keeps MongoDB's default names; another collation names its indexes after it, so that they
 * are built beside those of another collation rather than clash with them (docs/operations.md).
 */
export function indexesIn (collation: CollationOptions | undefined): Record<string, IndexDescription[]> {
  if (collation === undefined) return INDEX_KEYS
  const suffix = collationKey(collation)
  return Object.fromEntries(Object.entries(INDEX_KEYS).map(([collection, indexes]) => [
    collection,
    indexes.map((index) => ({
      ...index, name: `${defaultName(index.key as Record<string, unknown>)}_${suffix}`, collation
    }))
  ]))
}

/** The indexes of the default collation. */
export const INDEXES = indexesIn(parseCollation(DEFAULT_COLLATION))

/**
 * Created once the database first answers (the service starts before it), in the background:
 * index builds on a slow database can take longer than a start is allowed, and requests are
 * served meanwhile. A failure is retried at the next check that the database answers.
 */
async function indexesPlugin (fastify: FastifyInstance) {
  const indexes = indexesIn(parseCollation(fastify.config.COLLATION))
  let created = false
  let creating: Promise<void> | undefined
  const create = async (): Promise<void> => {
    for (const [collection, list] of Object.entries(indexes)) {
      await fastify.database.timed('createIndexes',
        async () => await fastify.database.collection(collection).createIndexes(list))
    }
  }
  fastify.database.readiness.onCheck((answered) => {
    if (!answered || created || creating !== undefined) return
    creating = create().then(() => { created = true }, (error: unknown) => {
      fastify.log.warn({ err: error }, 'creating the list indexes failed; retrying at the next check')
    }).finally(() => { creating = undefined })
  })
  fastify.decorate('indexes', { settled: async () => { await creating } })
}

export default fp(indexesPlugin, { name: 'indexes', dependencies: ['config', 'errors', 'mongodb'] })
