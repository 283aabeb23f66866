import fastifyMongo from '@fastify/mongodb'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/** How long the driver looks for a server before a request fails with DATABASE_UNAVAILABLE. */
export const SERVER_SELECTION_TIMEOUT_MS = 3000

/** One MongoClient for the whole process, closed when the app closes. */
async function mongodbPlugin (fastify: FastifyInstance) {
  const { MONGODB_URI, MONGODB_DB } = fastify.config
  if (MONGODB_URI === undefined) throw new Error('MONGODB_URI must be resolved (server.ts or the test helper picks the database) before the app starts')
  await fastify.register(fastifyMongo, {
    url: MONGODB_URI,
    database: MONGODB_DB,
    forceClose: true,
    serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
    appName: 'listing-api'
  })
}

export default fp(mongodbPlugin, { name: 'mongodb', dependencies: ['config'] })
