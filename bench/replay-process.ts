// The replay database in a process of its own (bench/replay-database.ts), so that its CPU time
// is never counted as the service's. Prints {"uri"} once listening; on stdin, `replay` switches
// from recording to replaying and `stats` prints the counts, each answered with one JSON line.
import { createInterface } from 'node:readline'
import { startReplay } from './replay-database.js'

const replay = await startReplay(process.env.UPSTREAM_URI as string)
console.log(JSON.stringify({ uri: replay.uri }))
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'replay') replay.replay()
  console.log(JSON.stringify(replay.stats()))
})
process.once('SIGTERM', () => { replay.close().finally(() => process.exit(0)) })
