// `npm run db`: an offline MongoDB for mongosh-style tools, or for MONGODB_URI of the service.
import { start } from './server.js'

const port = Number(process.env.PORT ?? 27017)
const db = await start({ port: Number.isInteger(port) ? port : 27017, host: process.env.HOST ?? '127.0.0.1' })
console.log(db.uri)
const stop = (): void => { db.close().then(() => process.exit(0), () => process.exit(1)) }
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
