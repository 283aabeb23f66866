import type { FastifyInstance } from 'fastify'

/**
 * Counts the commands the app's MongoClient sends from now on (driver command monitoring),
 * so that a test can assert that a refused request ran no query.
 */
export function watchCommands (fastify: FastifyInstance): { names: () => string[] } {
  const client = fastify.mongo.client
  client.monitorCommands = true
  const names: string[] = []
  client.on('commandStarted', (event) => names.push(event.commandName))
  return { names: () => names.splice(0) }
}
