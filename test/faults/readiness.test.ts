// /ready answers at once from what the service already knows (its background pings and the
// driver's view of the servers), never by waiting on the database in the probe's own time:
// 503 by the watchdog's next ping after the database refuses connections and once it has been
// silent for QUERY_TIMEOUT_MS, 200 while it answers pings at all, however slowly (docs/operations.md).
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { TICK_MS } from '../../database/readiness.js'
import { until } from '../helpers/until.js'
import {
  ANSWER_BOUND_MS,
  QUERY_TIMEOUT_MS,
  RECOVERY_BOUND_MS,
  SLACK_MS,
  faultApp,
  proxiedDatabase
} from './fault-app.js'

t.setTimeout(120_000)
const proxy = await proxiedDatabase(t)
const fastify = await faultApp(t, proxy)
/**
 * /ready answers at once (docs/operations.md): from what is known, with no round trip, so this is
 * room for a busy machine's scheduling only. It is a reply's delay on the slow database below
 * (QUERY_TIMEOUT_MS / 2): an answer that waited for a ping there would take that long at least,
 * and on a silent one QUERY_TIMEOUT_MS. (Waiting on a refusing database would take no longer.)
 */
const ANSWER_MS = QUERY_TIMEOUT_MS / 2
/** How often probe() asks: a change is seen up to this long after it happens. */
const PROBE_EVERY_MS = 100

/** One answer of /ready: its status, when it was asked (ms into the probing), how long it took, and why when 503. */
interface Probe { status: number, at: number, ms: number, detail?: string }

/** Asks /ready every PROBE_EVERY_MS until `stop` holds, for at most `ms`, timing each answer. */
async function probe (app: FastifyInstance, ms: number, stop: (status: number) => boolean): Promise<Probe[]> {
  const started = Date.now()
  const probes: Probe[] = []
  await until(async () => {
    const sent = Date.now()
    const res = await app.inject('/ready')
    probes.push({
      status: res.statusCode,
      at: sent - started,
      ms: Date.now() - sent,
      ...(res.statusCode === 200 ? {} : { detail: res.json().detail })
    })
    return stop(res.statusCode)
  }, ms, PROBE_EVERY_MS)
  return probes
}

const slowest = (probes: Probe[]): number => Math.max(...probes.map((p) => p.ms))
const firstWith = (probes: Probe[], status: number): number => probes.find((p) => p.status === status)?.at ?? Infinity

t.test('a database that refuses connections: 503 by the next ping, every answer at once', async (t) => {
  t.equal((await fastify.inject('/ready')).statusCode, 200, 'ready before')
  proxy.outage()
  // The ping under way fails as its connection is reset, or the next, TICK_MS after the last ended,
  // fails at once: the connection is refused.
  const bound = TICK_MS + PROBE_EVERY_MS + SLACK_MS
  const probes = await probe(fastify, 2 * bound, (status) => status === 503)
  t.ok(firstWith(probes, 503) <= bound, `503 after ${firstWith(probes, 503)} ms (TICK_MS ${TICK_MS})`)
  t.ok(slowest(probes) < ANSWER_MS, `slowest answer ${slowest(probes)} ms`)
  proxy.heal()
  const back = await probe(fastify, RECOVERY_BOUND_MS, (status) => status === 200)
  t.ok(firstWith(back, 200) <= RECOVERY_BOUND_MS, `200 again ${firstWith(back, 200)} ms after it accepts connections`)
})

t.test('a silent database: 503 once it has been silent for QUERY_TIMEOUT_MS, every answer at once', async (t) => {
  t.equal((await probe(fastify, 3000, (status) => status === 200)).at(-1)?.status, 200, 'ready before')
  proxy.blackhole()
  const probes = await probe(fastify, QUERY_TIMEOUT_MS + 4000, (status) => status === 503)
  const turned = firstWith(probes, 503)
  t.ok(turned <= QUERY_TIMEOUT_MS + TICK_MS + PROBE_EVERY_MS + SLACK_MS,
    `503 after ${turned} ms of silence (QUERY_TIMEOUT_MS ${QUERY_TIMEOUT_MS})`)
  t.ok(slowest(probes) < ANSWER_MS, `slowest answer ${slowest(probes)} ms`)
  const res = await fastify.inject('/ready')
  t.match(res.json(), { status: 503, code: 'DATABASE_UNAVAILABLE', detail: /^Not ready: / }, 'the detail says why')
  proxy.heal()
  const back = await probe(fastify, RECOVERY_BOUND_MS + 5000, (status) => status === 200)
  t.ok(firstWith(back, 200) <= RECOVERY_BOUND_MS, `200 again ${firstWith(back, 200)} ms after it answers`)
})

t.test('a slow database that answers: 200 throughout, every answer at once', async (t) => {
  // A database and service of its own: the ones above may still be recovering from the silence
  // (the pool cleared, a ping waiting for a connection), which is not what this measures.
  const proxy = await proxiedDatabase(t)
  const fastify = await faultApp(t, proxy)
  // The watchdog's pings answered at the pace of the slow database: /ready is asked throughout these.
  let slowPings = 0
  fastify.database.onCommand((command, outcome, seconds) => {
    if (command === 'ping' && outcome === 'success' && seconds * 1000 >= QUERY_TIMEOUT_MS / 2) slowPings++
  })
  t.equal((await probe(fastify, 3000, (status) => status === 200)).at(-1)?.status, 200, 'ready before')
  // Replies as slow as the service promises to serve (QUERY_TIMEOUT_MS / 2 each, docs/operations.md);
  // pings take that long too, and so would a /ready that waited on one.
  proxy.slow(QUERY_TIMEOUT_MS / 2)
  const pings = 3
  const from = slowPings
  const probes = await probe(fastify, pings * (ANSWER_BOUND_MS + TICK_MS) + SLACK_MS, () => slowPings - from >= pings)
  t.ok(slowPings - from >= pings, `${slowPings - from} slow pings answered while /ready was asked`)
  t.same(probes.filter((p) => p.status !== 200), [], `${probes.length} answers, all 200`)
  t.ok(slowest(probes) < ANSWER_MS, `slowest answer ${slowest(probes)} ms`)
  proxy.heal()
})
