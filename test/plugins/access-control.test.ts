// AUTH_MODE=jwt (docs/access-control.md) against a JWKS server on loopback with keys made here: which
// tokens pass, what the refusals look like, and what a token's projects claim lets a caller read.
// Where the keys come from, and a key set that fails, is test/plugins/access-control-keys.test.ts's.
import { createHmac } from 'node:crypto'
import t from 'tap'
import { watchCommands } from '../helpers/commands.js'
import { requireChangeStreams } from '../helpers/feeds.js'
import { AUDIENCE, ISSUER, mint, type Claims } from '../helpers/tokens.js'
import { NESTED_LISTS } from '../helpers/lists.js'
import { get, startAccessControl } from './access-control-setup.js'

const { rsa, ec, fastify, publicIds, privateIds } = await startAccessControl(t)
const [a, b] = publicIds as [string, string]
const c = privateIds[0] as string
const feeds = await requireChangeStreams(t)
const KINDS = NESTED_LISTS

t.test('valid RS256 and ES256 tokens read their projects', async (t) => {
  for (const key of [rsa, ec]) {
    const res = await get(fastify, `/projects/${a}/sessions?limit=1`, mint(key, { projects: [a] }))
    t.equal(res.statusCode, 200, key.alg)
  }
})

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const seconds = Math.floor(Date.now() / 1000)
/** The claims of a token that would pass, encoded, with `extra` added. */
const payloadOf = (extra: Claims = {}) =>
  base64url({ iss: ISSUER, aud: AUDIENCE, exp: seconds + 600, projects: '*', ...extra })
const unsigned = `${base64url({ alg: 'none', typ: 'JWT' })}.${payloadOf()}.`
const confusedHeader = base64url({ alg: 'HS256', typ: 'JWT', kid: 'rsa-1' })
const confusedPayload = payloadOf()
const confusedSignature = createHmac('sha256', rsa.publicPem)
  .update(`${confusedHeader}.${confusedPayload}`).digest('base64url')
const confused = `${confusedHeader}.${confusedPayload}.${confusedSignature}`
const valid = mint(rsa, { projects: '*' })
const [head, , signature] = valid.split('.') as [string, string, string]
const tampered = `${head}.${payloadOf({ sub: 'admin' })}.${signature}`

type Refused = [what: string, token: string | undefined, reason: string]
/** A refused case: a token of the RSA key for every project, but for its `claims` and `options`. */
const refused = (what: string, claims: Claims, reason: string, options?: Parameters<typeof mint>[2]): Refused =>
  [what, mint(rsa, { projects: '*', ...claims }, options), reason]

const REFUSED: Refused[] = [
  ['no token', undefined, 'no token'],
  refused('expired (beyond the 30 s tolerance)', { exp: seconds - 120 }, 'expired', { expiresIn: null }),
  refused('not yet valid', {}, 'not yet valid', { notBefore: 600_000 }),
  refused('without exp', {}, 'missing exp', { expiresIn: null }),
  refused('without iss (a token of the same key for another purpose)', { iss: undefined }, 'missing iss'),
  refused('without aud', { aud: undefined }, 'missing aud'),
  refused('another issuer', { iss: 'https://evil.test' }, 'wrong issuer'),
  refused('another audience', { aud: 'other-api' }, 'wrong audience'),
  // Their header names an algorithm that is not accepted: refused before any key is looked up.
  ['alg none', unsigned, 'algorithm not allowed'],
  ['HS256 signed with the public key (algorithm confusion)', confused, 'algorithm not allowed'],
  ['a tampered payload', tampered, 'bad signature'],
  ['no projects claim', mint(rsa), 'no valid projects claim'],
  ['a malformed projects claim', mint(rsa, { projects: ['not-an-id'] }), 'no valid projects claim'],
  ['a projects claim that is a string', mint(rsa, { projects: a }), 'no valid projects claim'],
  ['a bearer token that is no JWT', 'abc.def', 'malformed']
]

const failures = () => [...fastify.authFailures.values()].reduce((x, y) => x + y, 0)

t.test('refused tokens: 401 UNAUTHENTICATED with WWW-Authenticate, and no query', async (t) => {
  const commands = watchCommands(fastify)
  for (const [what, token, reason] of REFUSED) {
    const failuresBefore = failures()
    const reasonBefore = fastify.authFailures.get(reason) ?? 0
    const res = await get(fastify, `/projects/${a}/sessions`, token)
    t.equal(res.statusCode, 401, `${what}: 401`)
    t.match(res.json(), {
      status: 401,
      code: 'UNAUTHENTICATED',
      errors: [{ param: 'authorization', code: 'UNAUTHENTICATED' }]
    }, what)
    t.equal(res.headers['www-authenticate'], token === undefined
      ? 'Bearer realm="listing-api"'
      : `Bearer realm="listing-api", error="invalid_token", error_description="${reason}"`, `${what}: WWW-Authenticate`)
    t.equal(fastify.authFailures.get(reason), reasonBefore + 1, `${what}: counted as '${reason}'`)
    t.equal(failures(), failuresBefore + 1, `${what}: one failure counted`)
    t.notMatch(res.body, token === undefined ? /^$/ : token.slice(-20), 'the token is not echoed')
  }
  t.same(commands.names(), [], 'no database command for a refused caller')
})

t.test('another scheme sent no bearer token: 401 without an error code (RFC 6750, 3.1)', async (t) => {
  const commands = watchCommands(fastify)
  for (const header of ['Basic dXNlcjpwYXNz', 'Token abc', 'Bearerabc.def.ghi', 'abc.def.ghi']) {
    const before = fastify.authFailures.get('not a bearer token') ?? 0
    const res = await fastify.inject({ url: `/projects/${a}/sessions`, headers: { authorization: header } })
    t.equal(res.statusCode, 401, header)
    t.equal(res.headers['www-authenticate'], 'Bearer realm="listing-api"', `${header}: no error named`)
    t.match(res.json().detail, /needs a bearer token/, `${header}: says what to send`)
    t.equal(fastify.authFailures.get('not a bearer token'), before + 1, `${header}: counted`)
  }
  t.same(commands.names(), [], 'no database command')
})

t.test('the header as RFC 6750 writes it: "Bearer" in any case, one or more spaces; ' +
  'two Authorization headers are 400', async (t) => {
  const token = mint(ec, { projects: [a] })
  const url = `/projects/${a}/sessions?limit=1`
  for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER   ${token}`]) {
    t.equal((await fastify.inject({ url, headers: { authorization: header } })).statusCode, 200, header.slice(0, 10))
  }
  const commands = watchCommands(fastify)
  for (const pair of [
    [`Bearer ${token}`, 'Bearer x'], ['Bearer x', `Bearer ${token}`], [`Bearer ${token}`, `Bearer ${token}`]
  ]) {
    const res = await fastify.inject({ url, headers: { authorization: pair } as Record<string, string[]> })
    t.equal(res.statusCode, 400)
    t.match(res.json(), { code: 'BAD_REQUEST', errors: [{ param: 'authorization' }] })
    t.match(res.headers['www-authenticate'], /error="invalid_request"/)
  }
  t.same(commands.names(), [], 'no database command')
  t.equal(fastify.authFailures.get('several authorization headers'), 3, 'counted as failures, with their reason')
})

t.test('a remembered token vouches for itself only: ' +
  'the same claims with another signature are refused', async (t) => {
  const token = mint(ec, { projects: [a] })
  for (let i = 0; i < 2; i++) {
    t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, token)).statusCode, 200, 'verified, then remembered')
  }
  const [header, payload, signature] = token.split('.') as [string, string, string]
  const changed = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`
  const other = `${header}.${payload}.${changed}`
  const res = await get(fastify, `/projects/${a}/sessions?limit=1`, other)
  t.equal(res.statusCode, 401, 'a signature differing in one character is checked, not taken from memory')
  t.equal((await get(fastify, `/projects/${a}/sessions?limit=1`, token)).statusCode, 200,
    'and the remembered token still passes')
})

t.test('a token in the query string is not a token', async (t) => {
  const res = await get(fastify, `/projects/${a}/sessions?access_token=${valid}`)
  t.equal(res.statusCode, 401)
})

t.test('a nested list outside the claim is 404, exactly as a project that does not exist, ' +
  'and queries nothing', async (t) => {
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
  fastify.mongo.client.on('commandStarted', (event) => {
    names.push({ collection: String(event.command[event.commandName]) })
  })
  await get(fastify, `/projects/${b}/registrations`, token)
  t.same(names, [], 'no command at all for a project outside the claim')
  t.equal((await get(fastify, `/projects/${a}/registrations?limit=1`, token)).statusCode, 200,
    'its own project is served')
})

t.test('counts per group: a token is needed, a project outside the claim is not found, ' +
  '/projects/counts counts only the claim', async (t) => {
  for (const kind of KINDS) {
    const none = await get(fastify, `/projects/${a}/${kind}/counts?by=name`)
    t.equal(none.statusCode, 401, `${kind}: no token`)
    t.equal(none.json().code, 'UNAUTHENTICATED')
    const inClaim = await get(fastify, `/projects/${a}/${kind}/counts?by=name`, mint(ec, { projects: [a] }))
    t.equal(inClaim.statusCode, 200, `${kind}: a claimed project`)
    const outside = await get(fastify, `/projects/${b}/${kind}/counts?by=name`, mint(ec, { projects: [a] }))
    t.equal(outside.json().code, 'PROJECT_NOT_FOUND', `${kind}: outside the claim`)
  }
  t.equal((await get(fastify, '/projects/counts?by=public')).statusCode, 401, '/projects/counts: no token')
  const claimed = (await get(fastify, '/projects/counts?by=public', mint(ec, { projects: [a, c] })))
    .json() as { total: number }
  t.equal(claimed.total, 2, '/projects/counts counts the claimed projects only')
  t.equal((await get(fastify, '/projects/public/counts?by=name')).statusCode, 200,
    'the open list\'s counts need no token')
})

t.test('/projects lists only the claim, whatever the filter says', async (t) => {
  const token = mint(rsa, { projects: [a, c] })
  const filters = [
    '',
    `&filter=${encodeURIComponent(JSON.stringify({ _id: { $in: [a, b, c] } }))}`,
    `&filter=${encodeURIComponent(JSON.stringify({ _id: { $ne: a } }))}`,
    '&filter[public]=true'
  ]
  for (const filter of filters) {
    const res = await get(fastify, `/projects?limit=100${filter}`, token)
    t.equal(res.statusCode, 200)
    const ids = (res.json().data as Array<{ _id: string }>).map((p) => p._id)
    t.ok(ids.every((id) => id === a || id === c), `${filter || 'no filter'}: only claimed projects (${ids.length})`)
  }
  const all = await get(fastify, '/projects?limit=100', mint(rsa, { projects: '*' }))
  t.equal(all.json().data.length, 3, '"*" reads every project')
})

t.test('/projects/public, /health, /ready and the docs need no token', async (t) => {
  for (const url of ['/projects/public', '/health', '/ready', '/docs/json']) {
    t.equal((await get(fastify, url)).statusCode, 200, url)
  }
  // Swagger UI's page itself, not a redirect to it.
  const page = await get(fastify, '/docs')
  t.equal(page.statusCode, 200, '/docs')
  t.match(page.headers['content-type'], /^text\/html/, '/docs: a page')
  t.match(page.body, /swagger-ui/, '/docs: the Swagger UI')
  const doc = (await get(fastify, '/docs/json')).json()
  const { bearerAuth } = doc.components.securitySchemes
  t.same(bearerAuth, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: bearerAuth.description })
  t.same(doc.paths['/projects/{projectId}/sessions'].get.security, [{ bearerAuth: [] }])
  t.equal(doc.paths['/projects/public'].get.security, undefined)
})

t.test('change feeds: a token is needed, a project outside the claim is not found, ' +
  '/projects/changes names only the claim\'s projects', feeds, async (t) => {
  t.equal((await get(fastify, `/projects/${a}/registrations/changes`)).statusCode, 401, 'no token')
  t.equal((await get(fastify, `/projects/${a}/registrations/changes`, mint(ec, { projects: [a] }))).statusCode, 200,
    'a claimed project')
  const outside = await get(fastify, `/projects/${c}/registrations/changes`, mint(ec, { projects: [a] }))
  t.equal(outside.statusCode, 404, 'a project outside the claim is answered as one that does not exist')
  t.equal(outside.json().code, 'PROJECT_NOT_FOUND')
  const token = mint(ec, { projects: [a, c] })
  type Answer = { events: Array<{ _id: string }>, next: string, synced: boolean }
  const read = async (url: string) => (await get(fastify, url, token)).json() as Answer
  let answer = await read('/projects/changes?limit=1000&fields=name')
  const seen = answer.events.map((event) => event._id)
  while (!answer.synced || answer.events.length > 0) {
    answer = await read(`/projects/changes?limit=1000&fields=name&since=${answer.next}`)
    seen.push(...answer.events.map((event) => event._id))
  }
  t.same(seen.sort(), [a, c].sort(), 'the listing names the claim\'s projects only')
  // A change to a project outside the claim is no event, not even a remove.
  const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
  const { ObjectId } = await import('mongodb')
  await db.collection('projects').updateOne({ _id: new ObjectId(b) }, { $set: { name: 'renamed' } })
  await db.collection('projects').updateOne({ _id: new ObjectId(a) }, { $set: { name: 'renamed too' } })
  const after = await read(`/projects/changes?fields=name&since=${answer.next}`)
  t.same(after.events.map((event) => event._id), [a], 'only the claimed project\'s change')
  // A token is bound to the claim too (test/changes/claim-binding.test.ts): the narrower one lists again.
  const narrower = await get(fastify, `/projects/changes?fields=name&since=${answer.next}`, mint(ec, { projects: [a] }))
  t.equal(narrower.statusCode, 400, 'a narrower claim does not follow a copy made under a wider one')
  t.equal(narrower.json().code, 'CURSOR_MISMATCH')
})
