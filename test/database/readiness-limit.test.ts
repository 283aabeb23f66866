// A readiness ping bounded by its own limit, without a database: a driver that drops the ping's
// signal does not keep /ready waiting. Fake timers: the unit tier is a process of its own.
import { EventEmitter } from 'node:events'
import { mock } from 'node:test'
import type { FastifyBaseLogger } from 'fastify'
import type { MongoClient } from 'mongodb'
import t from 'tap'
import { DatabaseReadiness } from '../../database/readiness.js'
import { settle } from '../helpers/until.js'

const quiet = () => {}
const log = {
  info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet, fatal: quiet, child: () => log
} as unknown as FastifyBaseLogger

t.test('a ping whose driver never ends it (a dropped signal) still fails, a tick after its limit', async (t) => {
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => { mock.timers.reset() })
  // A client whose command ignores its signal and never answers.
  const client = Object.assign(new EventEmitter(), {
    db: () => ({ command: async () => await new Promise(() => {}) }),
    options: { hosts: [{ host: 'db.example', port: 27017 }] }
  }) as unknown as MongoClient
  const warnings: string[] = []
  const checks = new DatabaseReadiness({
    client,
    log: { ...log, warn: (message: string) => { warnings.push(message) } } as unknown as FastifyBaseLogger,
    pingTimeoutMs: 1000
  })
  let ended = false
  const pinging = checks.ping().finally(() => { ended = true })
  // Not yet started, so not the first ping: its limit is pingTimeoutMs, and the tick is 500 ms.
  mock.timers.tick(1499)
  await settle(5)
  t.equal(ended, false, 'still waiting within its limit and a tick')
  mock.timers.tick(1)
  t.equal(await pinging, false, 'then it fails')
  t.match(warnings, [/^waiting for the database at db\.example:27017: TimeoutError/], 'and says so')
})
