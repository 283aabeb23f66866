// While the service knows that its database refuses connections (/ready says so), lists and
// feeds answer 503 DATABASE_UNAVAILABLE at once instead of waiting out server selection, the
// whole query budget; they serve again once it accepts connections (within 10 s). A replica set
// in an election, whose members answer but none is primary, still gets the budget to find one.
import t from 'tap'
import { build } from '../helpers/build.js'
import { timeUntil, until } from '../helpers/until.js'
import { startElectingMember } from './electing-member.js'
import { RECOVERY_BOUND_MS, proxiedDatabase, recoveryTime, timed } from './fault-app.js'

t.setTimeout(120_000)

/** The default budget, as a deployment runs it: a request waits at most this long for a server. */
const BUDGET_MS = 5000
/** At once: well under the budget, whatever the machine's load. */
const AT_ONCE_MS = BUDGET_MS / 5
/**
 * Node's timers count from the clock the event loop read as its turn began: the driver's
 * server-selection timer, set late in a turn, fires early by Date.now() by as long as the turn had
 * run, up to this on a busy machine. A wait not given its budget ends in a few ms.
 */
const EARLY_TIMER_MS = 100

t.test('a database that refuses connections: lists and feeds answer 503 at once, and serve again after', async (t) => {
  const proxy = await proxiedDatabase(t)
  const fastify = await build(t, { databaseUri: proxy.uri, config: { QUERY_TIMEOUT_MS: BUDGET_MS } })
  const list = '/projects?limit=5'
  t.equal((await timed(fastify, list)).status, 200, 'serves before')
  proxy.outage()
  const refused = await timeUntil(async () => {
    const ready = await fastify.inject('/ready')
    return ready.statusCode === 503 && /refuses connections/.test(ready.json().detail)
  }, 2 * BUDGET_MS, 100)
  t.ok(refused < Infinity, `/ready says the database refuses connections after ${refused} ms`)
  for (const url of [list, '/projects?limit=5&count=true', '/projects/changes', '/projects/changes?wait=30']) {
    const answer = await timed(fastify, url)
    t.match(answer, { status: 503, code: 'DATABASE_UNAVAILABLE', retryAfter: '1' }, `${url}: 503 with Retry-After`)
    t.ok(answer.ms < AT_ONCE_MS, `${url}: answered in ${answer.ms} ms, the budget being ${BUDGET_MS} ms`)
  }
  proxy.heal()
  const recovered = await recoveryTime(fastify, list)
  t.ok(recovered <= RECOVERY_BOUND_MS, `lists serve again ${recovered} ms after it accepts connections`)
  t.equal((await fastify.inject('/projects/changes')).statusCode, 200, 'and feeds')
})

t.test('a replica set in an election (members answer, none is primary): ' +
  'a list waits for a primary within its budget', async (t) => {
  const member = await startElectingMember()
  t.teardown(member.close)
  const budgetMs = 1000
  const fastify = await build(t, { databaseUri: member.uri, config: { QUERY_TIMEOUT_MS: budgetMs } })
  t.equal((await timed(fastify, '/projects?limit=5')).status, 200, 'serves while it has a primary')
  member.stepDown()
  t.ok(await until(() => member.checksAsSecondary() >= 2, 4 * budgetMs), 'the driver has seen it step down')
  t.equal(fastify.database.readiness.refusesConnections(), false, 'members that answer are not refusing')
  const answer = await timed(fastify, '/projects?limit=5')
  t.match(answer, { status: 503, code: 'DATABASE_UNAVAILABLE' })
  // serverSelectionTimeoutMS is the budget: the selection begins after the request is sent.
  t.ok(answer.ms >= budgetMs - EARLY_TIMER_MS,
    `it waited ${answer.ms} ms for a primary, the budget being ${budgetMs} ms`)
  t.notMatch((await fastify.inject('/ready')).json().detail, /refuses connections/, '/ready does not say it refuses')
})
