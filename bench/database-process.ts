// The benchmark's database in a process of its own, chosen as server.ts chooses it, so that
// its CPU time is never counted as the server's. Prints one JSON line: { uri, kind }.
import { chooseDatabase } from '../process/choose-database.js'

const db = await chooseDatabase()
console.log(JSON.stringify({ uri: db.uri, kind: db.kind, reason: db.reason }))
process.once('SIGTERM', () => { db.close().finally(() => process.exit(0)) })
