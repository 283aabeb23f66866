import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import * as kinds from '../schemas/kinds.js'
import { Problem } from '../schemas/problem.js'

/** Schemas with an $id, added once: routes refer to them, and the OpenAPI document names them. */
async function sharedSchemasPlugin (fastify: FastifyInstance) {
  fastify.addSchema(Problem)
  for (const schema of Object.values(kinds)) fastify.addSchema(schema)
}

export default fp(sharedSchemasPlugin, { name: 'shared-schemas' })
