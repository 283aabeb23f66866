// AUTH_MODE=jwt's keys (docs/access-control.md): a key set fetched from a JWKS server on loopback
// as keys rotate, and when it is down, slow or broken; a public key instead; fast-jwt's warnings.
import type { FastifyInstance } from 'fastify'
import { createVerifier } from 'fast-jwt'
import t from 'tap'
import { build } from '../helpers/build.js'
import { testDatabase } from '../helpers/database.js'
import { buildWithDemoData } from '../helpers/demo-app.js'
import { AUDIENCE, ISSUER, makeKey, mint } from '../helpers/tokens.js'
import {
  KEY_SET_COOLDOWN_MS, KEY_SET_RETRY_MS, quietKeyBuilder, tokenVerifier
} from '../../access-control/verify-token.js'
import { CLIENT_MARGIN_MS } from '../../plugins/mongodb.js'
import { get, startAccessControl } from './access-control-setup.js'

const { rsa, ec, jwks, config, clock, now, fastify, publicIds } = await startAccessControl(t)
const a = publicIds[0] as string

t.test('key rotation and a key set that cannot be had', async (t) => {
  const rotated = makeKey('rsa-2', 'RS256')
  jwks.keys.push(rotated)
  t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, mint(rotated, { projects: '*' }))).statusCode, 200,
    'a new key, published after start, passes at once')
  const fetches = jwks.requests()
  const storm = async (name: string) => await Promise.all(Array.from({ length: 40 }, async (_, i) =>
    await get(fastify, `/projects/${a}/sessions?limit=1`, mint(makeKey(`${name}-${i}`, 'ES256'), { projects: '*' }))))
  t.ok((await storm('random')).every((res) => res.statusCode === 401), 'unknown kids: 401')
  for (let i = 0; i < 20; i++) {
    const token = mint(makeKey(`one-by-one-${i}`, 'ES256'), { projects: '*' })
    t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, token)).statusCode, 401)
  }
  t.equal(jwks.requests() - fetches, 0, 'within the cool-down after the fetch that found the new key, ' +
    '60 unknown kids, 40 at once and 20 one after another, cost no fetch')
  clock.time += KEY_SET_COOLDOWN_MS
  t.ok((await storm('later')).every((res) => res.statusCode === 401), 'unknown kids after the cool-down: 401')
  t.equal(jwks.requests() - fetches, 1, 'once the cool-down is over, 40 unknown kids at once share one fetch')
  jwks.down('refuse')
  t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, mint(rsa, { projects: '*' }))).statusCode, 200,
    'a cached key still works while the key set is down')
  jwks.down('up')
})

t.test('a key set that is down, slow, oversized or malformed: ' +
  '503 AUTH_UNAVAILABLE within the query budget', async (t) => {
  let app: FastifyInstance | undefined
  const pauseS = String(KEY_SET_RETRY_MS / 1000)
  const QUERY_TIMEOUT_MS = 1000
  // No request waits for keys longer than QUERY_TIMEOUT_MS (docs/access-control.md); the request's
  // budget (its database deadline, plugins/mongodb.ts) adds CLIENT_MARGIN_MS to answer in.
  const budget = QUERY_TIMEOUT_MS + CLIENT_MARGIN_MS
  for (const mode of ['refuse', 'slow', 'trickle', 'oversized', 'malformed', 'error'] as const) {
    // A service of its own for each, on the same data: its key set has never failed, so its
    // first unknown key fetches at once. (The test database's URI: build() adds its monitoring.)
    app = await build(t, {
      databaseUri: (await testDatabase()).uri,
      config: { ...config, QUERY_TIMEOUT_MS, MONGODB_DB: fastify.config.MONGODB_DB },
      now
    })
    t.equal((await get(app, `/projects/${a}/sessions?limit=1`, mint(rsa, { projects: '*' }))).statusCode, 200,
      `${mode}: the known key passes`)
    jwks.down(mode)
    const started = Date.now()
    const res = await get(app, `/projects/${a}/sessions?limit=1`,
      mint(makeKey(`new-${mode}`, 'RS256'), { projects: '*' }))
    const ms = Date.now() - started
    t.equal(res.statusCode, 503, `${mode}: 503`)
    t.match(res.json(), { code: 'AUTH_UNAVAILABLE', errors: [{ param: 'authorization' }] },
      `${mode}: AUTH_UNAVAILABLE`)
    t.equal(res.headers['retry-after'], pauseS, `${mode}: Retry-After, the whole pause after the failed fetch`)
    t.ok(ms <= budget, `${mode}: answered in ${ms} ms, within the request's budget (${budget} ms)`)
    t.equal((await get(app, `/projects/${a}/sessions?limit=1`, mint(rsa, { projects: '*' }))).statusCode, 200,
      `${mode}: cached keys still pass`)
    jwks.down('up')
  }
  // The last service, once the key set answers again: a new key waits out the pause after the
  // failed fetch (503 with Retry-After), then passes.
  const recovering = app as FastifyInstance
  const back = makeKey('after-recovery', 'ES256')
  jwks.keys.push(back)
  const fetches = jwks.requests()
  const paused = await get(recovering, `/projects/${a}/sessions?limit=1`, mint(back, { projects: '*' }))
  t.equal(paused.statusCode, 503, 'within the pause after a failed fetch: 503')
  t.equal(paused.headers['retry-after'], pauseS, 'Retry-After: the pause left, by the clock')
  t.equal(jwks.requests(), fetches, 'no fetch within the pause')
  clock.time += KEY_SET_RETRY_MS
  t.equal((await get(recovering, `/projects/${a}/sessions?limit=1`, mint(back, { projects: '*' }))).statusCode, 200,
    'once it answers and the pause is over, new keys pass')
  t.equal(jwks.requests(), fetches + 1, 'after one fetch')
})

t.test('JWT_PUBLIC_KEY instead of a key set', async (t) => {
  const app = await buildWithDemoData(t, {
    config: {
      AUTH_MODE: 'jwt',
      JWT_PUBLIC_KEY: ec.publicPem.replaceAll('\n', '\\n'),
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE
    }
  })
  t.equal((await get(app, '/projects', mint(ec, { projects: '*' }))).statusCode, 200)
  t.equal((await get(app, '/projects', mint(rsa, { projects: '*' }))).statusCode, 401, 'a token of another key')
})

t.test('no warning about the cache key builder is printed; other warnings are', async (t) => {
  const warnings: Array<{ code?: string, message: string }> = []
  const listener = (warning: Error & { code?: string }) => {
    warnings.push({ code: warning.code, message: warning.message })
  }
  process.on('warning', listener)
  t.teardown(() => { process.off('warning', listener) })
  const emitWarning = process.emitWarning
  // A verifier made for a key it has not used yet: fast-jwt would warn as it is made.
  const fresh = makeKey('ec-fresh', 'ES256')
  const verify = tokenVerifier({
    publicKey: fresh.publicPem,
    algorithms: ['ES256'],
    issuer: ISSUER,
    audience: AUDIENCE,
    projectsClaim: 'projects',
    keyWaitMs: 1000
  })
  const result = await verify(`Bearer ${mint(fresh, { projects: [a] })}`)
  t.equal(result.ok, true, 'the token is verified')
  t.equal(quietKeyBuilder(() => {
    process.emitWarning('kept', { code: 'SOMETHING_ELSE' })
    process.emitWarning('dropped', { code: 'FAST_JWT_CACHE_KEY_BUILDER_SECURITY_RISK' })
    return 7
  }), 7)
  await new Promise((resolve) => setImmediate(resolve))
  t.same(warnings.filter((w) => w.code === 'FAST_JWT_CACHE_KEY_BUILDER_SECURITY_RISK'), [], 'not printed')
  t.same(warnings.filter((w) => w.code === 'SOMETHING_ELSE').map((w) => w.message), ['kept'],
    'another warning still is')
  t.equal(process.emitWarning, emitWarning, 'process.emitWarning is given back')
})

t.test('fast-jwt itself still warns so, as quietKeyBuilder assumes: its code, in its options', async (t) => {
  // Without the wrapper: if fast-jwt stopped warning, or warned another way, the reach would be
  // needless or blind, and this fails.
  const seen: unknown[][] = []
  const emitWarning = process.emitWarning
  process.emitWarning = ((...args: unknown[]) => { seen.push(args) }) as typeof process.emitWarning
  try {
    createVerifier({ key: 'a-key', cache: true, cacheKeyBuilder: (token: string) => token })
  } finally {
    process.emitWarning = emitWarning
  }
  t.match(seen, [[String, { code: 'FAST_JWT_CACHE_KEY_BUILDER_SECURITY_RISK' }]], 'a warning, its code in its options')
  t.equal(seen.length, 1)
})
