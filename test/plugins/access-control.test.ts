// AUTH_MODE=jwt (docs/access-control.md) against a JWKS server on loopback with keys made here: which
// tokens pass, what the refusals look like, and what a token's projects claim lets a caller read.
import { createHmac } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import t from 'tap'
import { build } from '../helpers/build.js'
import { watchCommands } from '../helpers/commands.js'
import { buildWithDemoData, projectIds } from '../helpers/demo-app.js'
import { requireChangeStreams } from '../helpers/feeds.js'
import { AUDIENCE, ISSUER, makeKey, mint, startJwksServer } from '../helpers/tokens.js'
import { NESTED_LISTS } from '../helpers/lists.js'
import { KEY_SET_COOLDOWN_MS, KEY_SET_RETRY_MS, quietKeyBuilder, tokenVerifier } from '../../access-control/verify-token.js'

const rsa = makeKey('rsa-1', 'RS256')
const ec = makeKey('ec-1', 'ES256')
const jwks = await startJwksServer([rsa, ec])
t.teardown(jwks.close)
const config = { AUTH_MODE: 'jwt' as const, JWT_JWKS_URI: jwks.uri, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE }
// The apps' clock: it stands still unless a test moves it, so that the key sets' cool-down and
// pauses end when a test says, not when the test happens to get there.
const clock = { time: Date.now() }
const now = () => clock.time
const fastify = await buildWithDemoData(t, { config, now })
// The same demo data, without access control, tells which projects exist.
const open = await buildWithDemoData(t)
const { publicIds, privateIds } = await projectIds(open)
const [a, b] = publicIds as [string, string]
const c = privateIds[0] as string
const feeds = await requireChangeStreams(t)
const KINDS = NESTED_LISTS

const get = async (app: FastifyInstance, url: string, token?: string) =>
  await app.inject({ url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })

t.test('valid RS256 and ES256 tokens read their projects', async (t) => {
  for (const key of [rsa, ec]) {
    const res = await get(fastify, `/projects/${a}/sessions?limit=1`, mint(key, { projects: [a] }))
    t.equal(res.statusCode, 200, key.alg)
  }
})

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const unsigned = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600, projects: '*' })}.`
const confusedHeader = base64url({ alg: 'HS256', typ: 'JWT', kid: 'rsa-1' })
const confusedPayload = base64url({ iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600, projects: '*' })
const confused = `${confusedHeader}.${confusedPayload}.${createHmac('sha256', rsa.publicPem).update(`${confusedHeader}.${confusedPayload}`).digest('base64url')}`
const valid = mint(rsa, { projects: '*' })
const [head, , signature] = valid.split('.') as [string, string, string]
const tampered = `${head}.${base64url({ iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600, projects: '*', sub: 'admin' })}.${signature}`

const REFUSED: Array<[string, string | undefined, string]> = [
  ['no token', undefined, 'no token'],
  ['expired (beyond the 30 s tolerance)', mint(rsa, { projects: '*', exp: Math.floor(Date.now() / 1000) - 120 }, { expiresIn: null }), 'expired'],
  ['not yet valid', mint(rsa, { projects: '*' }, { notBefore: 600_000 }), 'not yet valid'],
  ['without exp', mint(rsa, { projects: '*' }, { expiresIn: null }), 'missing exp'],
  ['without iss (a token of the same key for another purpose)', mint(rsa, { projects: '*', iss: undefined }), 'missing iss'],
  ['without aud', mint(rsa, { projects: '*', aud: undefined }), 'missing aud'],
  ['another issuer', mint(rsa, { projects: '*', iss: 'https://evil.test' }), 'wrong issuer'],
  ['another audience', mint(rsa, { projects: '*', aud: 'other-api' }), 'wrong audience'],
  ['alg none', unsigned, ''],
  ['HS256 signed with the public key (algorithm confusion)', confused, ''],
  ['a tampered payload', tampered, 'bad signature'],
  ['no projects claim', mint(rsa), 'no valid projects claim'],
  ['a malformed projects claim', mint(rsa, { projects: ['not-an-id'] }), 'no valid projects claim'],
  ['a projects claim that is a string', mint(rsa, { projects: a }), 'no valid projects claim'],
  ['garbage', 'abc.def', '']
]

t.test('refused tokens: 401 UNAUTHENTICATED with WWW-Authenticate, and no query', async (t) => {
  const commands = watchCommands(fastify)
  for (const [what, token, reason] of REFUSED) {
    const failuresBefore = [...fastify.authFailures.values()].reduce((x, y) => x + y, 0)
    const res = await get(fastify, `/projects/${a}/sessions`, token)
    t.equal(res.statusCode, 401, `${what}: 401`)
    t.match(res.json(), { status: 401, code: 'UNAUTHENTICATED', errors: [{ param: 'authorization', code: 'UNAUTHENTICATED' }] }, what)
    t.match(res.headers['www-authenticate'], token === undefined ? /^Bearer realm="listing-api"$/ : /^Bearer realm="listing-api", error="invalid_token"/, `${what}: WWW-Authenticate`)
    if (reason !== '') t.ok(fastify.authFailures.has(reason), `${what}: counted as '${reason}'`)
    t.equal([...fastify.authFailures.values()].reduce((x, y) => x + y, 0), failuresBefore + 1, `${what}: one failure counted`)
    t.notMatch(res.body, token === undefined ? /^$/ : token.slice(-20), 'the token is not echoed')
  }
  t.same(commands.names(), [], 'no database command for a refused caller')
})

t.test('the header as RFC 6750 writes it: "Bearer" in any case, one or more spaces; two Authorization headers are 400', async (t) => {
  const token = mint(ec, { projects: [a] })
  for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER   ${token}`]) {
    t.equal((await fastify.inject({ url: `/projects/${a}/sessions?limit=1`, headers: { authorization: header } })).statusCode, 200, header.slice(0, 10))
  }
  const commands = watchCommands(fastify)
  for (const pair of [[`Bearer ${token}`, 'Bearer x'], ['Bearer x', `Bearer ${token}`], [`Bearer ${token}`, `Bearer ${token}`]]) {
    const res = await fastify.inject({ url: `/projects/${a}/sessions?limit=1`, headers: { authorization: pair } as Record<string, string[]> })
    t.equal(res.statusCode, 400)
    t.match(res.json(), { code: 'BAD_REQUEST', errors: [{ param: 'authorization' }] })
    t.match(res.headers['www-authenticate'], /error="invalid_request"/)
  }
  t.same(commands.names(), [], 'no database command')
  t.equal(fastify.authFailures.get('several authorization headers'), 3, 'counted as failures, with their reason')
})

t.test('a remembered token vouches for itself only: the same claims with another signature are refused', async (t) => {
  const token = mint(ec, { projects: [a] })
  for (let i = 0; i < 2; i++) t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, token)).statusCode, 200, 'verified, then remembered')
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const other = `${header}.${payload}.${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`
  const res = await get(fastify, `/projects/${a}/sessions?limit=1`, other)
  t.equal(res.statusCode, 401, 'a signature differing in one character is checked, not taken from memory')
  t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, token)).statusCode, 200, 'and the remembered token still passes')
})

t.test('a token in the query string is not a token', async (t) => {
  const res = await get(fastify, `/projects/${a}/sessions?access_token=${valid}`)
  t.equal(res.statusCode, 401)
})

t.test('a nested list outside the claim is 404, exactly as a project that does not exist, and queries nothing', async (t) => {
  const token = mint(ec, { projects: [a] })
  const commands = watchCommands(fastify)
  for (const kind of KINDS) {
    const denied = await get(fastify, `/projects/${b}/${kind}`, token)
    const missing = await get(fastify, `/projects/${'0'.repeat(24)}/${kind}`, token)
    t.equal(denied.statusCode, 404, `${kind}: 404`)
    t.same(Object.keys(denied.json()), Object.keys(missing.json()), `${kind}: the same body shape`)
    t.equal(denied.json().code, 'PROJECT_NOT_FOUND')
    t.equal(denied.json().detail, missing.json().detail.replace('0'.repeat(24), b), `${kind}: the same words`)
    t.notOk(commands.names().some((name) => name !== 'find'), 'only the unknown project was looked up')
  }
  const names: Array<{ collection: string }> = []
  fastify.mongo.client.on('commandStarted', (event) => { names.push({ collection: String(event.command[event.commandName]) }) })
  await get(fastify, `/projects/${b}/registrations`, token)
  t.same(names, [], 'no command at all for a project outside the claim')
  t.equal((await get(fastify, `/projects/${a}/registrations?limit=1`, token)).statusCode, 200, 'its own project is served')
})

t.test('counts per group: a token is needed, a project outside the claim is not found, /projects/counts counts only the claim', async (t) => {
  for (const kind of KINDS) {
    const none = await get(fastify, `/projects/${a}/${kind}/counts?by=name`)
    t.equal(none.statusCode, 401, `${kind}: no token`)
    t.equal(none.json().code, 'UNAUTHENTICATED')
    t.equal((await get(fastify, `/projects/${a}/${kind}/counts?by=name`, mint(ec, { projects: [a] }))).statusCode, 200, `${kind}: a claimed project`)
    t.equal((await get(fastify, `/projects/${b}/${kind}/counts?by=name`, mint(ec, { projects: [a] }))).json().code, 'PROJECT_NOT_FOUND', `${kind}: outside the claim`)
  }
  t.equal((await get(fastify, '/projects/counts?by=public')).statusCode, 401, '/projects/counts: no token')
  const claimed = (await get(fastify, '/projects/counts?by=public', mint(ec, { projects: [a, c] }))).json() as { total: number }
  t.equal(claimed.total, 2, '/projects/counts counts the claimed projects only')
  t.equal((await get(fastify, '/projects/public/counts?by=name')).statusCode, 200, 'the open list\'s counts need no token')
})

t.test('/projects lists only the claim, whatever the filter says', async (t) => {
  const token = mint(rsa, { projects: [a, c] })
  for (const filter of ['', `&filter=${encodeURIComponent(JSON.stringify({ _id: { $in: [a, b, c] } }))}`, `&filter=${encodeURIComponent(JSON.stringify({ _id: { $ne: a } }))}`, '&filter[public]=true']) {
    const res = await get(fastify, `/projects?limit=100${filter}`, token)
    t.equal(res.statusCode, 200)
    const ids = (res.json().data as Array<{ _id: string }>).map((p) => p._id)
    t.ok(ids.every((id) => id === a || id === c), `${filter || 'no filter'}: only claimed projects (${ids.length})`)
  }
  const all = await get(fastify, '/projects?limit=100', mint(rsa, { projects: '*' }))
  t.equal(all.json().data.length, 3, '"*" reads every project')
})

t.test('/projects/public, /health, /ready and the docs need no token', async (t) => {
  for (const url of ['/projects/public', '/health', '/ready', '/docs/json']) t.equal((await get(fastify, url)).statusCode, 200, url)
  t.equal((await get(fastify, '/docs')).statusCode < 400, true, '/docs')
  const doc = (await get(fastify, '/docs/json')).json()
  t.same(doc.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: doc.components.securitySchemes.bearerAuth.description })
  t.same(doc.paths['/projects/{projectId}/sessions'].get.security, [{ bearerAuth: [] }])
  t.equal(doc.paths['/projects/public'].get.security, undefined)
})

t.test('key rotation and a key set that cannot be had', async (t) => {
  const rotated = makeKey('rsa-2', 'RS256')
  jwks.keys.push(rotated)
  t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, mint(rotated, { projects: '*' }))).statusCode, 200, 'a new key, published after start, passes at once')
  const fetches = jwks.requests()
  const storm = async (name: string) => await Promise.all(Array.from({ length: 40 }, async (_, i) => await get(fastify, `/projects/${a}/sessions?limit=1`, mint(makeKey(`${name}-${i}`, 'ES256'), { projects: '*' }))))
  t.ok((await storm('random')).every((res) => res.statusCode === 401), 'unknown kids: 401')
  for (let i = 0; i < 20; i++) t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, mint(makeKey(`one-by-one-${i}`, 'ES256'), { projects: '*' }))).statusCode, 401)
  t.equal(jwks.requests() - fetches, 0, 'within the cool-down after the fetch that found the new key, 60 unknown kids, 40 at once and 20 one after another, cost no fetch')
  clock.time += KEY_SET_COOLDOWN_MS
  t.ok((await storm('later')).every((res) => res.statusCode === 401), 'unknown kids after the cool-down: 401')
  t.equal(jwks.requests() - fetches, 1, 'once the cool-down is over, 40 unknown kids at once share one fetch')
  jwks.down('refuse')
  t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, mint(rsa, { projects: '*' }))).statusCode, 200, 'a cached key still works while the key set is down')
  jwks.down('up')
})

t.test('a key set that is down, slow, oversized or malformed: 503 AUTH_UNAVAILABLE within the query budget', async (t) => {
  let app: FastifyInstance | undefined
  const pauseS = String(KEY_SET_RETRY_MS / 1000)
  for (const mode of ['refuse', 'slow', 'trickle', 'oversized', 'malformed', 'error'] as const) {
    // A service of its own for each, on the same data: its key set has never failed, so its
    // first unknown key fetches at once.
    app = await build(t, { databaseUri: fastify.config.MONGODB_URI, config: { ...config, QUERY_TIMEOUT_MS: 1000, MONGODB_DB: fastify.config.MONGODB_DB }, now })
    t.equal((await get(app, `/projects/${a}/sessions?limit=1`, mint(rsa, { projects: '*' }))).statusCode, 200, `${mode}: the known key passes`)
    jwks.down(mode)
    const started = Date.now()
    const res = await get(app, `/projects/${a}/sessions?limit=1`, mint(makeKey(`new-${mode}`, 'RS256'), { projects: '*' }))
    const ms = Date.now() - started
    t.equal(res.statusCode, 503, `${mode}: 503`)
    t.match(res.json(), { code: 'AUTH_UNAVAILABLE', errors: [{ param: 'authorization' }] }, `${mode}: AUTH_UNAVAILABLE`)
    t.equal(res.headers['retry-after'], pauseS, `${mode}: Retry-After, the whole pause after the failed fetch`)
    t.ok(ms <= 1000 + 500, `${mode}: answered in ${ms} ms`)
    t.equal((await get(app, `/projects/${a}/sessions?limit=1`, mint(rsa, { projects: '*' }))).statusCode, 200, `${mode}: cached keys still pass`)
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
  t.equal((await get(recovering, `/projects/${a}/sessions?limit=1`, mint(back, { projects: '*' }))).statusCode, 200, 'once it answers and the pause is over, new keys pass')
  t.equal(jwks.requests(), fetches + 1, 'after one fetch')
})

t.test('change feeds: a token is needed, a project outside the claim is not found, /projects/changes names only the claim\'s projects', feeds, async (t) => {
  t.equal((await get(fastify, `/projects/${a}/registrations/changes`)).statusCode, 401, 'no token')
  t.equal((await get(fastify, `/projects/${a}/registrations/changes`, mint(ec, { projects: [a] }))).statusCode, 200, 'a claimed project')
  const outside = await get(fastify, `/projects/${c}/registrations/changes`, mint(ec, { projects: [a] }))
  t.equal(outside.statusCode, 404, 'a project outside the claim is answered as one that does not exist')
  t.equal(outside.json().code, 'PROJECT_NOT_FOUND')
  const token = mint(ec, { projects: [a, c] })
  let answer = (await get(fastify, '/projects/changes?limit=1000&fields=name', token)).json() as { events: Array<{ _id: string }>, next: string, synced: boolean }
  const seen = answer.events.map((event) => event._id)
  while (!answer.synced || answer.events.length > 0) {
    answer = (await get(fastify, `/projects/changes?limit=1000&fields=name&since=${answer.next}`, token)).json() as typeof answer
    seen.push(...answer.events.map((event) => event._id))
  }
  t.same(seen.sort(), [a, c].sort(), 'the listing names the claim\'s projects only')
  // A change to a project outside the claim is no event, not even a remove.
  const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
  const { ObjectId } = await import('mongodb')
  await db.collection('projects').updateOne({ _id: new ObjectId(b) }, { $set: { name: 'renamed' } })
  await db.collection('projects').updateOne({ _id: new ObjectId(a) }, { $set: { name: 'renamed too' } })
  const after = (await get(fastify, `/projects/changes?fields=name&since=${answer.next}`, token)).json() as typeof answer
  t.same(after.events.map((event) => event._id), [a], 'only the claimed project\'s change')
  const tokenOfA = mint(ec, { projects: [a] })
  const wider = await get(fastify, `/projects/changes?fields=name&since=${answer.next}`, tokenOfA)
  t.equal(wider.statusCode, 200, 'a token is bound to the feed, not to the caller: a narrower claim reads it')
  t.notOk((wider.json() as typeof answer).events.some((event) => event._id !== a), 'and sees only its own projects')
})

t.test('JWT_PUBLIC_KEY instead of a key set', async (t) => {
  const app = await buildWithDemoData(t, { config: { AUTH_MODE: 'jwt', JWT_PUBLIC_KEY: ec.publicPem.replaceAll('\n', '\\n'), JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE } })
  t.equal((await get(app, '/projects', mint(ec, { projects: '*' }))).statusCode, 200)
  t.equal((await get(app, '/projects', mint(rsa, { projects: '*' }))).statusCode, 401, 'a token of another key')
})

t.test('no warning about the cache key builder is printed; other warnings are', async (t) => {
  const warnings: Array<{ code?: string, message: string }> = []
  const listener = (warning: Error & { code?: string }) => { warnings.push({ code: warning.code, message: warning.message }) }
  process.on('warning', listener)
  t.teardown(() => { process.off('warning', listener) })
  const emitWarning = process.emitWarning
  // A verifier made for a key it has not used yet: fast-jwt would warn as it is made.
  const fresh = makeKey('ec-fresh', 'ES256')
  const verify = tokenVerifier({ publicKey: fresh.publicPem, algorithms: ['ES256'], issuer: ISSUER, audience: AUDIENCE, projectsClaim: 'projects', keyWaitMs: 1000 })
  const result = await verify(`Bearer ${mint(fresh, { projects: [a] })}`)
  t.equal(result.ok, true, 'the token is verified')
  t.equal(quietKeyBuilder(() => { process.emitWarning('kept', { code: 'SOMETHING_ELSE' }); process.emitWarning('dropped', { code: 'FAST_JWT_CACHE_KEY_BUILDER_SECURITY_RISK' }); return 7 }), 7)
  await new Promise((resolve) => setImmediate(resolve))
  t.same(warnings.filter((w) => w.code === 'FAST_JWT_CACHE_KEY_BUILDER_SECURITY_RISK'), [], 'not printed')
  t.same(warnings.filter((w) => w.code === 'SOMETHING_ELSE').map((w) => w.message), ['kept'], 'another warning still is')
  t.equal(process.emitWarning, emitWarning, 'process.emitWarning is given back')
})
