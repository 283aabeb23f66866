import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { OffSchemaRecord } from '../list-endpoint/off-schema.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Stored values left out of responses because their type does not fit (list-endpoint/off-schema.ts). */
    offSchema: OffSchemaRecord
  }
}

/** Counts every misfit; logs the first one of each collection and field, with the document's `_id`. */
async function offSchemaPlugin (fastify: FastifyInstance) {
  const counts = new Map<string, number>()
  fastify.decorate('offSchema', {
    counts,
    report: (collection, { field, id }, log) => {
      const key = `${collection}.${field}`
      const seen = counts.get(key) ?? 0
      counts.set(key, seen + 1)
      if (seen === 0) {
        log.warn({ collection, field, _id: String(id) },
          'a stored value does not fit its declared type: left out of responses (logged once per collection and field)')
      }
    }
  })
}

export default fp(offSchemaPlugin, { name: 'off-schema' })
