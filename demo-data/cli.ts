// `npm run seed [-- --scale 5]`: (re)loads the demo data into MONGODB_URI / MONGODB_DB.
import { readOptions, usageError } from '../lib/command-line.js'
import { readConfig } from '../plugins/config.js'
import { seedDemoData } from './seed.js'

const USAGE = `usage: npm run seed [-- --scale N]
  (Re)loads the demo data (projects and their activities, categories, places, sessions,
  stewards, teams and registrations) into MONGODB_URI, database MONGODB_DB (default listing).
  --scale   how many times the base data set (default 1; at most 100)
  --help    this text`

const values = readOptions(USAGE, { scale: { type: 'string', default: '1' } })
const scale = Number(values.scale)
if (!(scale > 0 && scale <= 100)) {
  usageError(USAGE, `--scale must be a number above 0 and at most 100, got '${values.scale}'`)
}
const config = readConfig()
if (config.MONGODB_URI === undefined) {
  console.error('MONGODB_URI is not set: name the database to seed (npm start seeds its embedded database by itself; ' +
    '`npm run db` starts one you can point at)')
  process.exit(2)
}
const counts = await seedDemoData(config.MONGODB_URI, config.MONGODB_DB, { scale })
console.log(`seeded ${config.MONGODB_DB}:`, counts)
