import closeWithGrace from 'close-with-grace'
import Fastify from 'fastify'
import app, { serverOptions } from './app.js'
import { chooseDatabase, describeDatabase } from './choose-database.js'
import { ConfigError, readConfig } from './plugins/config.js'
import { seedDemoData } from './demo-data/seed.js'

let config
try {
  config = readConfig()
} catch (error) {
  console.error((error as ConfigError).message)
  process.exit(1)
}

const fastify = Fastify(serverOptions(config))
let database
try {
  database = await chooseDatabase()
} catch (error) {
  fastify.log.fatal((error as Error).message)
  process.exit(1)
}
fastify.log.info(describeDatabase(database))

// The embedded databases start empty: fill them so that the API has something to list.
if (database.embedded) {
  const counts = await seedDemoData(database.uri, config.MONGODB_DB)
  fastify.log.info({ documents: counts }, 'demo data loaded into the embedded database')
}

await fastify.register(app, { config: { ...config, MONGODB_URI: database.uri } })

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err !== undefined) fastify.log.error({ err }, 'server closing after an error')
  else fastify.log.info(`${signal} received, server closing`)
  await fastify.close()
  // The database goes last: in-flight requests finished while fastify.close() drained them.
  await database.close()
})

try {
  const address = await fastify.listen({ port: config.PORT, host: config.HOST })
  fastify.log.info(`API at ${address}/projects, docs at ${address}/docs`)
} catch (err) {
  fastify.log.fatal({ err }, 'could not listen')
  await database.close()
  process.exit(1)
}
