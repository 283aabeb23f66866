import { MongoClient } from 'mongodb'
import t from 'tap'
import { chooseDatabase, describeDatabase, ProductionNeedsMongoError } from '../choose-database.js'

t.test('MONGODB_URI wins', async (t) => {
  const db = await chooseDatabase({ env: { MONGODB_URI: 'mongodb://db.internal:27017' } })
  t.equal(db.kind, 'external')
  t.equal(db.uri, 'mongodb://db.internal:27017')
  t.equal(db.embedded, false)
  t.match(describeDatabase(db), /external \(MONGODB_URI is set\)/)
})

t.test('production without MONGODB_URI is refused', async (t) => {
  const error = await chooseDatabase({ env: { NODE_ENV: 'production' } }).catch((e: unknown) => e)
  t.ok(error instanceof ProductionNeedsMongoError)
  t.match((error as Error).message, /MONGODB_URI is required/)
})

t.test('without MONGODB_URI an embedded database is started and answers the driver', async (t) => {
  const db = await chooseDatabase({ env: {} })
  t.teardown(db.close)
  t.ok(db.embedded)
  t.match(db.kind, /^(mongodb-memory-server|offline-mongodb)$/)
  t.match(describeDatabase(db), /no MONGODB_URI/)
  const client = await new MongoClient(db.uri, { serverSelectionTimeoutMS: 3000 }).connect()
  t.teardown(() => client.close())
  t.equal((await client.db('x').command({ ping: 1 })).ok, 1)
})
