// Outages, as at every failover, upgrade or node drain: the proxy resets every connection and
// refuses new ones, then lets them through again. Every list answers within the bound with 503
// DATABASE_UNAVAILABLE (never 500, never a hang), and the service serves again within 10 s, in
// every round. Each outage lasts until the driver has been turned away a number of times that
// varies by round: after the refusals the request met, from one more attempt to five.
import t from 'tap'
import { until } from '../helpers/until.js'
import {
  ANSWER_BOUND_MS,
  HEARTBEAT_MS,
  RECOVERY_BOUND_MS,
  SLACK_MS,
  faultApp,
  proxiedDatabase,
  recoveryTime,
  timed
} from './fault-app.js'

const ROUNDS = 20
t.setTimeout(120_000)
const proxy = await proxiedDatabase(t)
const fastify = await faultApp(t, proxy)
const url = '/projects?limit=5'
t.test(`${ROUNDS} reset-and-refuse outages: bounded 503s during each, recovery after each`, async (t) => {
  t.equal((await timed(fastify, url)).status, 200, 'serves before the first outage')
  const recoveries: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    proxy.outage()
    const started = Date.now()
    const during = await timed(fastify, url)
    t.equal(during.status, 503, `round ${round}: 503 during the outage`)
    t.equal(during.code, 'DATABASE_UNAVAILABLE', `round ${round}: the database cannot be reached`)
    t.equal(during.retryAfter, '1', `round ${round}: Retry-After`)
    t.ok(during.ms <= ANSWER_BOUND_MS, `round ${round}: answered in ${during.ms} ms`)
    const ready = await fastify.inject('/ready')
    t.equal(ready.statusCode, 503, `round ${round}: /ready tells the truth`)
    t.equal((await fastify.inject('/health')).statusCode, 200, `round ${round}: /health stays 200`)
    // The driver keeps trying (its monitor's checks, its pool's connections, the watchdog's
    // pings): a check at least every HEARTBEAT_MS.
    const attempts = 1 + round % 5
    const from = proxy.refused()
    const refused = await until(() => proxy.refused() - from >= attempts, attempts * HEARTBEAT_MS + SLACK_MS)
    t.ok(refused,
      `round ${round}: the outage lasted until ${attempts} more attempts were refused (${Date.now() - started} ms)`)
    proxy.heal()
    const recovered = await recoveryTime(fastify, url)
    recoveries.push(recovered)
    t.ok(recovered <= RECOVERY_BOUND_MS, `round ${round}: serving again after ${recovered} ms`)
  }
  const ready = await fastify.inject('/ready')
  t.equal(ready.statusCode, 200, `/ready is 200 again ${ready.statusCode === 200 ? '' : ready.json().detail}`)
  t.comment(`recovery times (ms): ${recoveries.join(' ')}`)
})
