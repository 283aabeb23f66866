// docs/operations.md: overload shedding (event-loop delay) and the optional per-caller rate limit.
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { buildWithDemoData } from '../helpers/demo-app.js'
import { AUDIENCE, ISSUER, makeKey, mint } from '../helpers/tokens.js'

const sleep = async (ms: number) => await new Promise((resolve) => setTimeout(resolve, ms))

/** Test-only routes that keep the event loop lagging (busy 300 ms at a time, with hardly a pause), as runaway work would. */
const lagRoutes = (app: FastifyInstance): void => {
  let lag: NodeJS.Timeout | undefined
  app.get('/test/lag/start', async () => {
    lag = setInterval(() => { const until = Date.now() + 300; while (Date.now() < until) { /* busy */ } }, 1)
    return {}
  })
  app.get('/test/lag/stop', async () => { clearInterval(lag); return {} })
  app.addHook('onClose', async () => clearInterval(lag))
}

/** Whether `url` answers 200 within about `tries` tenths of a second (a busy machine may lag a moment by itself). */
const serves = async (fastify: FastifyInstance, url: string, tries = 40): Promise<boolean> => {
  for (let i = 0; i < tries; i++) {
    if ((await fastify.inject(url)).statusCode === 200) return true
    await sleep(100)
  }
  return false
}

t.test('a blocked event loop: lists and /ready 503 OVERLOADED with Retry-After, /health 200, then recovery', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 100 }, extend: lagRoutes })
  t.ok(await serves(fastify, '/projects'), 'serves before')
  await fastify.inject('/test/lag/start')
  // The delay is sampled (mean per sample): on a busy machine the first samples may still look calm.
  const shed = async (url: string) => {
    for (let i = 0; i < 50; i++) {
      const res = await fastify.inject(url)
      if (res.statusCode === 503) return res
      await sleep(100)
    }
    return await fastify.inject(url)
  }
  const list = await shed('/projects')
  t.equal(list.statusCode, 503)
  t.match(list.json(), { code: 'OVERLOADED', errors: [{ code: 'OVERLOADED' }] })
  t.equal(list.headers['retry-after'], '1')
  t.equal((await shed('/ready')).statusCode, 503, '/ready is 503 while overloaded')
  t.equal((await fastify.inject('/health')).statusCode, 200, '/health stays 200')
  await fastify.inject('/test/lag/stop')
  t.ok(await serves(fastify, '/projects'), 'lists answer again once the loop recovers')
})

t.test('OVERLOAD_MAX_EVENT_LOOP_DELAY_MS=0: no load shedding, whatever the lag', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: 0 }, extend: lagRoutes })
  await fastify.inject('/test/lag/start')
  const statuses: number[] = []
  // Each pair waits behind the busy loop: three of them span a couple of seconds of lag, far
  // beyond the 100 ms at which the first test's service sheds.
  for (let i = 0; i < 3; i++) {
    statuses.push((await fastify.inject('/projects')).statusCode, (await fastify.inject('/ready')).statusCode)
    await sleep(150)
  }
  await fastify.inject('/test/lag/stop')
  t.same([...new Set(statuses)], [200], 'lists and /ready answer through a lagging loop')
})

t.test('RATE_LIMIT_PER_MINUTE: per caller (the token subject, else the address), 429 RATE_LIMITED with headers', async (t) => {
  const key = makeKey('rate', 'ES256')
  const fastify = await buildWithDemoData(t, { config: { RATE_LIMIT_PER_MINUTE: 3, AUTH_MODE: 'jwt', JWT_PUBLIC_KEY: key.publicPem, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE } })
  const alice = { authorization: `Bearer ${mint(key, { projects: '*', sub: 'alice' })}` }
  const bob = { authorization: `Bearer ${mint(key, { projects: '*', sub: 'bob' })}` }
  for (let i = 0; i < 3; i++) t.equal((await fastify.inject({ url: '/projects', headers: alice })).statusCode, 200, `alice ${i + 1}`)
  const limited = await fastify.inject({ url: '/projects', headers: alice })
  t.equal(limited.statusCode, 429)
  t.match(limited.json(), { code: 'RATE_LIMITED', errors: [{ code: 'RATE_LIMITED' }] })
  t.match(limited.headers['content-type'], /^application\/problem\+json/)
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
  t.equal(limited.headers['ratelimit-limit'], '3')
  t.equal(limited.headers['ratelimit-remaining'], '0')
  t.ok(limited.headers['ratelimit-reset'] !== undefined, 'RateLimit-Reset')
  t.equal((await fastify.inject({ url: '/projects', headers: bob })).statusCode, 200, 'another subject has its own budget')
  for (let i = 0; i < 5; i++) t.equal((await fastify.inject('/health')).statusCode, 200, 'not a list: not limited')
  for (let i = 0; i < 3; i++) await fastify.inject('/projects/public')
  t.equal((await fastify.inject('/projects/public')).statusCode, 429, 'without a token, the client address is the caller')
})

t.test('RATE_LIMIT_PER_MINUTE is one budget per caller for all the lists together, whatever lists they are', async (t) => {
  const fastify = await buildWithDemoData(t, { config: { RATE_LIMIT_PER_MINUTE: 20 } })
  const project = '65cd7e3007370d3300000000'
  const lists = ['/projects', '/projects/public', ...['activities', 'categories', 'places', 'sessions', 'stewards', 'teams', 'registrations'].map((kind) => `/projects/${project}/${kind}?limit=1`)]
  const statuses: number[] = []
  for (let i = 0; i < 27; i++) {
    const res = await fastify.inject({ url: lists[i % lists.length] as string, method: i % 4 === 3 ? 'HEAD' : 'GET' })
    statuses.push(res.statusCode)
  }
  t.same(statuses, [...Array(20).fill(200), ...Array(7).fill(429)], '20 answered, then 429 on every list, HEAD included')
  for (const url of ['/health', '/ready', '/docs/json', '/no-such-path']) {
    t.not((await fastify.inject(url)).statusCode, 429, `${url} is not a list: not limited`)
  }
})
