// Feed tests run against a standalone server (MONGODB_URI naming one) fail once, saying what they
// need, instead of each failing on its 503. The standalone is the stand-in behind the benchmark's
// replay database, which answers hello as a standalone mongod does.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { startReplay } from '../../bench/replay-database.js'
import { start } from '../../offline-mongodb/server.js'
import { NODE, nodeArgs } from '../helpers/node-child.js'

const ROOT = join(import.meta.dirname, '..', '..')

t.test('a feed test file on a standalone server: one failure that says why, its tests skipped', async (t) => {
  const standIn = await start({ port: 0 })
  t.teardown(standIn.close)
  const standalone = await startReplay(standIn.uri)
  t.teardown(standalone.close)
  const child = spawn(NODE, nodeArgs(['--import=tsx', 'test/changes/feed.test.ts']), {
    cwd: ROOT, env: { PATH: process.env.PATH, MONGODB_URI: standalone.uri }, stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  const need = 'change feed tests need a replica set or sharded cluster: MONGODB_URI names a standalone server'
  t.equal(code, 1, 'the file fails')
  const failures = [...output.matchAll(/^not ok \d+ - ([^#\n]*)/gm)].map((m) => m[1]?.trim())
  t.same(failures, ['the database gives change streams'], 'once')
  t.match(output, need, 'saying what it needs')
  const skipped = output.match(/^ok \d+ - .* # SKIP .*$/gm) ?? []
  t.ok(skipped.length > 3 && skipped.every((line) => line.endsWith(need)),
    `${skipped.length} feed tests skipped, each naming why`)
})
