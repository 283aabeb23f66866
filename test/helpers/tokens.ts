// Keys, a JWKS server on loopback and token minting for the access-control tests.
import { generateKeyPairSync, type KeyObject } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createSigner } from 'fast-jwt'

export const ISSUER = 'https://idp.test'
export const AUDIENCE = 'listing-api'

export interface TestKey { kid: string, alg: 'RS256' | 'ES256', privatePem: string, publicPem: string, jwk: Record<string, unknown> }

export function makeKey (kid: string, alg: TestKey['alg']): TestKey {
  const { privateKey, publicKey } = alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const pem = (key: KeyObject, type: 'pkcs8' | 'spki') => key.export({ format: 'pem', type }).toString()
  return { kid, alg, privatePem: pem(privateKey, 'pkcs8'), publicPem: pem(publicKey, 'spki'), jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' } }
}

export interface Claims { projects?: unknown, iss?: string, aud?: string, sub?: string, [name: string]: unknown }

/** A token signed by `key`: valid for an hour, issued by ISSUER for AUDIENCE, unless told otherwise. */
export function mint (key: TestKey, claims: Claims = {}, { expiresIn = 3_600_000, notBefore }: { expiresIn?: number | null, notBefore?: number } = {}): string {
  const sign = createSigner({
    key: key.privatePem,
    algorithm: key.alg,
    kid: key.kid,
    ...(expiresIn === null ? {} : { expiresIn }),
    ...(notBefore === undefined ? {} : { notBefore })
  })
  return sign({ iss: ISSUER, aud: AUDIENCE, sub: 'client-1', ...claims })
}

export interface JwksServer { uri: string, keys: TestKey[], requests: () => number, down: (mode: 'refuse' | 'slow' | 'up') => void, close: () => Promise<void> }

/** A JWKS endpoint that serves `keys` (mutable, for rotation), can refuse or stall. */
export async function startJwksServer (keys: TestKey[]): Promise<JwksServer> {
  let requests = 0
  let mode: 'refuse' | 'slow' | 'up' = 'up'
  const server = http.createServer((req, res) => {
    requests++
    if (mode === 'refuse') {
      res.socket?.destroy()
      return
    }
    if (mode === 'slow') return // never answers
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ keys: keys.map((key) => key.jwk) }))
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
