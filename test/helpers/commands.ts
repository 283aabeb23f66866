import type { FastifyInstance } from 'fastify'

/**
 * The commands the app's MongoClient sends from now on (driver command monitoring, switched on
 * by the build helper's URI), so that a test can assert that a refused request ran no query.
 * `names()` returns and forgets what was seen; the watchdog's pings (database/readiness.ts) are
 * not queries and are left out.
 */
export function watchCommands (fastify: FastifyInstance): { names: () => string[] } {
  const client = fastify.mongo.client
  if (!client.options.monitorCommands) {
    throw new Error('command monitoring is off: build the app with test/helpers/build.ts')
  }
  const names: string[] = []
  client.on('commandStarted', (event) => { if (event.commandName !== 'ping') names.push(event.commandName) })
  return { names: () => names.splice(0) }
}
