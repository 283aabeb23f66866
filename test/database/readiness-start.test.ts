// What /ready waits for at start, without a database: a ping bounded by its own limit (a driver
// that drops the ping's signal does not keep it waiting), and the start-up work. Fake timers:
// the unit tier is a process of its own.
import { EventEmitter } from 'node:events'
import { mock } from 'node:test'
import type { FastifyBaseLogger } from 'fastify'
import type { MongoClient } from 'mongodb'
import t from 'tap'
import { DatabaseReadiness } from '../../database/readiness.js'
import { StartUpWork } from '../../database/start-up-work.js'
import { settle, until } from '../helpers/until.js'

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

t.test('start-up work keeps /ready at "starting" until it has ended, however it ends', async (t) => {
  // A client whose pings are answered at once.
  const client = Object.assign(new EventEmitter(), {
    db: () => ({ command: async () => ({ ok: 1 }) }),
    options: { hosts: [{ host: 'db.example', port: 27017 }], minPoolSize: 0 }
  }) as unknown as MongoClient
  const checks = new DatabaseReadiness({ client, log, pingTimeoutMs: 1000 })
  let fail = (_error: Error): void => {}
  checks.startUp.add('a check', async () => await new Promise((_resolve, reject) => { fail = reject }))
  checks.start()
  t.teardown(() => { checks.stop() })
  // The first ping answered, the work not ended.
  const starting = { ready: false, reason: 'starting: the start-up checks are under way' }
  const reason = (): string | undefined => {
    const readiness = checks.readiness()
    return readiness.ready ? undefined : readiness.reason
  }
  t.ok(await until(() => reason() === starting.reason, 5000), 'the work is under way')
  t.same(checks.readiness(), starting, 'the first ping answered, the work not ended')
  fail(new Error('the database refused the check'))
  await checks.started()
  t.same(checks.readiness(), { ready: true }, 'ready once it has ended, though it failed')
})

t.test('start-up work that never ends holds /ready for its limit only; a failure is logged', async (t) => {
  mock.timers.enable({ apis: ['setTimeout'] })
  t.teardown(() => { mock.timers.reset() })
  const warnings: string[] = []
  const warned = { ...log, warn: (message: string) => { warnings.push(message) } } as unknown as FastifyBaseLogger
  const work = new StartUpWork()
  work.add('a check that never ends', async () => await new Promise(() => {}))
  work.add('a check that fails', async () => { throw new Error('refused') })
  const running = work.run(1000, warned)
  await settle(5)
  t.equal(work.done, false, 'not done while a piece runs within its limit')
  t.same(warnings, ['a check that fails at start failed: refused; it is made again when needed'])
  mock.timers.tick(1000)
  await running
  t.equal(work.done, true, 'done once the limit has passed')
  await work.run(1000, warned)
  t.equal(warnings.length, 1, 'run once: a second call runs nothing again')
})
