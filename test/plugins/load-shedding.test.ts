// docs/operations.md: overload shedding (event-loop delay) and the optional per-caller rate limit.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { buildWithDemoData } from '../helpers/demo-app.js'
import { jwtConfig, makeKey, mint } from '../helpers/tokens.js'
import { until } from '../helpers/until.js'
import { NESTED_LISTS } from '../helpers/lists.js'

/** The event-loop delay at which the first test's service sheds. */
const SHEDS_AT_MS = 100
/** @fastify/under-pressure's histogram resolution, which it takes off the mean delay it measures. */
const RESOLUTION_MS = 10

/**
 * Test-only routes that keep the event loop lagging (busy 300 ms at a time, with hardly a pause), as
 * runaway work would.
 */
const lagRoutes = (app: FastifyInstance): void => {
  let lag: NodeJS.Timeout | undefined
  app.get('/test/lag/start', async () => {
    lag = setInterval(() => { const until = Date.now() + 300; while (Date.now() < until) { /* busy */ } }, 1)
    return {}
  })
  app.get('/test/lag/stop', async () => { clearInterval(lag); return {} })
  app.addHook('onClose', async () => clearInterval(lag))
}

/**
 * Whether `url` answers 200 within the bound (the loop may lag a moment without the test's work: test
 * files run side by side).
 */
const serves = async (fastify: FastifyInstance, url: string): Promise<boolean> =>
  await until(async () => (await fastify.inject(url)).statusCode === 200, 10_000, 50)

t.test('a blocked event loop: lists and /ready 503 OVERLOADED with Retry-After, /health 200, ' +
  'then recovery', async (t) => {
  const fastify = await buildWithDemoData(t,
    { config: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: SHEDS_AT_MS }, extend: lagRoutes })
  t.ok(await serves(fastify, '/projects'), 'serves before')
  await fastify.inject('/test/lag/start')
  // The delay is sampled (the mean over each sample): the plugin reports the overload once a sample has seen the lag.
  t.ok(await until(() => fastify.isUnderPressure(), 10_000), 'the plugin reports the overload')
  const list = await fastify.inject('/projects')
  t.equal(list.statusCode, 503)
  t.match(list.json(), { code: 'OVERLOADED', errors: [{ code: 'OVERLOADED' }] })
  t.equal(list.headers['retry-after'], '1')
  t.equal((await fastify.inject('/ready')).statusCode, 503, '/ready is 503 while overloaded')
  t.equal((await fastify.inject('/health')).statusCode, 200, '/health stays 200')
  t.ok(fastify.isUnderPressure(), 'overloaded throughout')
  await fastify.inject('/test/lag/stop')
  t.ok(await serves(fastify, '/projects'), 'lists answer again once the loop recovers')
})

t.test('OVERLOAD_MAX_EVENT_LOOP_DELAY_MS=0: no load shedding, whatever the lag', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 0 }, extend: lagRoutes })
  // The lag measured as @fastify/under-pressure measures it, from the moment the busy loop starts.
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  t.teardown(() => { delay.disable() })
  await fastify.inject('/test/lag/start')
  delay.enable()
  const lagged = () => delay.count > 0 && delay.mean / 1e6 - RESOLUTION_MS > SHEDS_AT_MS
  const statuses: number[] = []
  const answeredThroughLag = await until(async () => {
    statuses.push((await fastify.inject('/projects')).statusCode, (await fastify.inject('/ready')).statusCode)
    return lagged() && statuses.length >= 6
  }, 10_000, 1)
  await fastify.inject('/test/lag/stop')
  t.ok(answeredThroughLag, `${statuses.length / 2} lists and /ready answered while the loop lagged more than the ` +
    `${SHEDS_AT_MS} ms at which the first test's service sheds`)
  t.same([...new Set(statuses)], [200], 'and all of them 200')
})

t.test('RATE_LIMIT_PER_MINUTE: per caller (the token subject, else the address), ' +
  '429 RATE_LIMITED with headers', async (t) => {
  const key = makeKey('rate', 'ES256')
  const fastify = await buildWithDemoData(t, {
    config: { RATE_LIMIT_PER_MINUTE: 3, ...jwtConfig(key) }
  })
  const alice = { authorization: `Bearer ${mint(key, { projects: '*', sub: 'alice' })}` }
  const bob = { authorization: `Bearer ${mint(key, { projects: '*', sub: 'bob' })}` }
  for (let i = 0; i < 3; i++) {
    t.equal((await fastify.inject({ url: '/projects', headers: alice })).statusCode, 200, `alice ${i + 1}`)
  }
  const limited = await fastify.inject({ url: '/projects', headers: alice })
  t.equal(limited.statusCode, 429)
  t.match(limited.json(), { code: 'RATE_LIMITED', errors: [{ code: 'RATE_LIMITED' }] })
  t.match(limited.headers['content-type'], /^application\/problem\+json/)
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
  t.equal(limited.headers['ratelimit-limit'], '3')
  t.equal(limited.headers['ratelimit-remaining'], '0')
  t.ok(limited.headers['ratelimit-reset'] !== undefined, 'RateLimit-Reset')
  t.equal((await fastify.inject({ url: '/projects', headers: bob })).statusCode, 200,
    'another subject has its own budget')
  for (let i = 0; i < 5; i++) t.equal((await fastify.inject('/health')).statusCode, 200, 'not a list: not limited')
  for (let i = 0; i < 3; i++) await fastify.inject('/projects/public')
  t.equal((await fastify.inject('/projects/public')).statusCode, 429,
    'without a token, the client address is the caller')
})

t.test('RATE_LIMIT_PER_MINUTE is one budget per caller for all the lists together, ' +
  'whatever lists they are', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { RATE_LIMIT_PER_MINUTE: 20 } })
  const project = '65cd7e3007370d3300000000'
  const lists = ['/projects', '/projects/public', ...NESTED_LISTS.map((kind) => `/projects/${project}/${kind}?limit=1`)]
  const statuses: number[] = []
  for (let i = 0; i < 27; i++) {
    const res = await fastify.inject({ url: lists[i % lists.length] as string, method: i % 4 === 3 ? 'HEAD' : 'GET' })
    statuses.push(res.statusCode)
  }
  t.same(statuses, [...Array(20).fill(200), ...Array(7).fill(429)],
    '20 answered, then 429 on every list, HEAD included')
  for (const url of ['/health', '/ready', '/docs/json', '/no-such-path']) {
    t.not((await fastify.inject(url)).statusCode, 429, `${url} is not a list: not limited`)
  }
})
