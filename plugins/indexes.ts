import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { IndexDescription } from 'mongodb'

declare module 'fastify' {
  interface FastifyInstance {
    /** The list indexes, created once the database first answers. */
    indexes: {
      /** Resolves when the creation under way, if any, has ended (however it ended). */
      settled: () => Promise<void>
    }
  }
}

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

/**
 * Created once the database first answers (the service starts before it), in the background:
 * index builds on a slow database can take longer than a start is allowed, and requests are
 * served meanwhile. A failure is retried at the next check that the database answers.
 */
async function indexesPlugin (fastify: FastifyInstance) {
  let created = false
  let creating: Promise<void> | undefined
  const create = async (): Promise<void> => {
    for (const [collection, indexes] of Object.entries(INDEXES)) await fastify.database.timed('createIndexes', async () => await fastify.database.collection(collection).createIndexes(indexes))
  }
  fastify.database.readiness.onCheck((answered) => {
    if (!answered || created || creating !== undefined) return
    creating = create().then(() => { created = true }, (error: unknown) => {
      fastify.log.warn({ err: error }, 'creating the list indexes failed; retrying at the next check')
    }).finally(() => { creating = undefined })
  })
  fastify.decorate('indexes', { settled: async () => { await creating } })
}

export default fp(indexesPlugin, { name: 'indexes', dependencies: ['mongodb'] })
