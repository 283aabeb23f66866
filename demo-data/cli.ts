// `npm run seed [-- --scale 5]`: (re)loads the demo data into MONGODB_URI / MONGODB_DB.
import { parseArgs } from 'node:util'
import { readConfig } from '../plugins/config.js'
import { seedDemoData } from './seed.js'

const { values } = parseArgs({ options: { scale: { type: 'string', default: '1' } } })
const scale = Number(values.scale)
if (!(scale > 0 && scale <= 100)) {
  console.error(`--scale must be a number above 0 and at most 100, got '${values.scale}'`)
  process.exit(2)
}
const config = readConfig()
if (config.MONGODB_URI === undefined) {
  console.error('MONGODB_URI is not set: name the database to seed (npm start seeds its embedded database by itself; `npm run db` starts one you can point at)')
  process.exit(2)
}
const counts = await seedDemoData(config.MONGODB_URI, config.MONGODB_DB, { scale })
console.log(`seeded ${config.MONGODB_DB}:`, counts)
