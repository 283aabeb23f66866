// Manual reproduction, with the driver alone (no service), of the hang database/client-replacement.ts
// works around: `npx tsx test/faults/reproduce-driver-hang.ts [mongodb-uri]` puts the fault proxy
// between a bare MongoClient and a database (the stand-in by default, or the URI given), cuts
// it off for 7 s three times, and says how long the client takes to answer a ping again.
//
// The cause, in mongodb 7.8.0 (7.9.0 is the same): Connection.writeCommand writes, and when
// socket.write() returns false waits for 'drain' with only the operation's AbortSignal and
// CSOT's timeout to stop it (src/cmap/connection.ts, around line 731). A socket that was
// destroyed before the write returns false and emits neither 'drain' nor another 'error', so a
// heartbeat, which has no signal (and CSOT is ignored in 7.x), waits for ever. Against the
// stand-in (polling heartbeats) every round recovers; the hang needs the race of a reset with
// a heartbeat write, which real mongod's streaming heartbeats make likely.
import { MongoClient } from 'mongodb'
import { start } from '../../offline-mongodb/server.js'
import { startFaultProxy } from './fault-proxy.js'

const given = process.argv[2]
const database = given === undefined ? await start() : undefined
const target = new URL((given ?? (database as { uri: string }).uri).replace('mongodb://', 'http://'))
const proxy = await startFaultProxy({ host: target.hostname, port: Number(target.port) })
const client = new MongoClient(proxy.uri, { serverSelectionTimeoutMS: 2000 })
for (const event of [
  'serverHeartbeatStarted', 'serverHeartbeatSucceeded', 'serverHeartbeatFailed', 'connectionPoolCleared'
]) {
  client.on(event as 'serverHeartbeatStarted', () => console.log(new Date().toISOString(), event))
}
const ping = async (): Promise<boolean> => await client.db('admin').command({ ping: 1 }).then(() => true, () => false)
console.log('before the outages:', await ping())
for (let round = 0; round < 3; round++) {
  proxy.outage()
  await new Promise((resolve) => setTimeout(resolve, 7000))
  proxy.heal()
  const healed = Date.now()
  let ok = false
  while (!ok && Date.now() - healed < 30_000) ok = await ping()
  console.log(`round ${round}: ` +
    `${ok ? `answers again after ${Date.now() - healed} ms` : 'still not answering after 30 s'}`)
}
await client.close(true)
await proxy.close()
await database?.close()
