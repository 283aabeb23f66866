// What test/plugins/access-control*.test.ts stand on: two keys made here, a JWKS server on loopback
// that publishes them, an app with AUTH_MODE=jwt on the demo data, and its clock.
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildWithDemoData, projectIds } from '../helpers/demo-app.js'
import { AUDIENCE, ISSUER, makeKey, startJwksServer } from '../helpers/tokens.js'

export async function startAccessControl (t: Test) {
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
  return { rsa, ec, jwks, config, clock, now, fastify, publicIds, privateIds }
}

export const get = async (app: FastifyInstance, url: string, token?: string) =>
  await app.inject({ url, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
