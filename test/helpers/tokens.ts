// Keys, a JWKS server on loopback and token minting for the access-control tests.
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createSigner } from 'fast-jwt'

export const ISSUER = 'https://idp.test'
export const AUDIENCE = 'listing-api'

export interface TestKey {
  kid: string
  alg: 'RS256' | 'ES256'
  privatePem: string
  publicPem: string
  jwk: Record<string, unknown>
}

export function makeKey (kid: string, alg: TestKey['alg']): TestKey {
  const { privateKey, publicKey } = alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const pem = (key: KeyObject, type: 'pkcs8' | 'spki') => key.export({ format: 'pem', type }).toString()
  return {
    kid,
    alg,
    privatePem: pem(privateKey, 'pkcs8'),
    publicPem: pem(publicKey, 'spki'),
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' }
  }
}

/** The configuration of a service that verifies tokens signed by `key` (AUTH_MODE=jwt, JWT_PUBLIC_KEY). */
export function jwtConfig (key: TestKey) {
  return { AUTH_MODE: 'jwt' as const, JWT_PUBLIC_KEY: key.publicPem, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE }
}

export interface Claims { projects?: unknown, iss?: string, aud?: string, sub?: string, [name: string]: unknown }

/** A token signed by `key`: valid for an hour, issued by ISSUER for AUDIENCE, unless told otherwise. */
export function mint (
  key: TestKey,
  claims: Claims = {},
  { expiresIn = 3_600_000, notBefore }: { expiresIn?: number | null, notBefore?: number } = {}
): string {
  const sign = createSigner({
    key: key.privatePem,
    algorithm: key.alg,
    kid: key.kid,
    ...(expiresIn === null ? {} : { expiresIn }),
    ...(notBefore === undefined ? {} : { notBefore })
  })
  return sign({ iss: ISSUER, aud: AUDIENCE, sub: 'client-1', ...claims })
}

/**
 * How the JWKS endpoint misbehaves: drops the connection, never
 * answers, trickles, sends 2 MiB, sends no JSON, or a 500.
 */
export type JwksMode = 'up' | 'refuse' | 'slow' | 'trickle' | 'oversized' | 'malformed' | 'error'

export interface JwksServer {
  uri: string
  keys: TestKey[]
  requests: () => number
  down: (mode: JwksMode) => void
  close: () => Promise<void>
}

/** A JWKS endpoint that serves `keys` (mutable, for rotation), or misbehaves as `down` says. */
export async function startJwksServer (keys: TestKey[]): Promise<JwksServer> {
  let requests = 0
  let mode: JwksMode = 'up'
  const server = http.createServer((req, res) => {
    requests++
    if (mode === 'refuse') {
      res.socket?.destroy()
      return
    }
    if (mode === 'slow') return // never answers
    if (mode === 'error') {
      res.writeHead(500).end('{"error":"internal"}')
      return
    }
    res.setHeader('content-type', 'application/json')
    const body = JSON.stringify({ keys: keys.map((key) => key.jwk) })
    if (mode === 'malformed') res.end(body.slice(0, -3))
    else if (mode === 'oversized') res.end(`{"pad":"${'x'.repeat(2 * 1024 * 1024)}",${body.slice(1)}`)
    else if (mode === 'trickle') {
      // Headers at once, then a byte every 200 ms: only a limit on the whole answer stops it.
      res.flushHeaders()
      const timer = setInterval(() => res.write(' '), 200)
      res.on('close', () => clearInterval(timer))
    } else res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    uri: `http://127.0.0.1:${port}/keys/jwks.json`,
    keys,
    requests: () => requests,
    down: (next) => { mode = next },
    close: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}
