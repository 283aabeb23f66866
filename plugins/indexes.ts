import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { IndexDescription } from 'mongodb'

const scoped = (...keys: Array<Record<string, 1 | -1>>): IndexDescription[] =>
  [{ key: { project: 1, _id: 1 } }, ...keys.map((key) => ({ key: { project: 1, ...key, _id: 1 } as Record<string, 1 | -1> }))]

/** The indexes the common lists need; creating an existing index is a no-op, so start-up is idempotent. */
export const INDEXES: Record<string, IndexDescription[]> = {
  projects: [{ key: { public: 1, _id: 1 } }],
  activities: scoped({ category: 1 }),
  categories: scoped(),
  places: scoped(),
  sessions: scoped({ start: 1 }),
  stewards: scoped(),
  teams: scoped(),
  registrations: scoped({ user: 1 }, { 'sessionsSubscriptions.session': 1 })
}

/** Created once the database first answers (the service starts before it), retried until they are. */
async function indexesPlugin (fastify: FastifyInstance) {
  fastify.database.watchdog.whenConnected(async () => {
    for (const [collection, indexes] of Object.entries(INDEXES)) await fastify.database.timed('createIndexes', async () => await fastify.database.collection(collection).createIndexes(indexes))
  })
}

export default fp(indexesPlugin, { name: 'indexes', dependencies: ['mongodb'] })
