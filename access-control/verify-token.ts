// Bearer tokens verified locally (CONTRACT.md §7, RFC 8725): algorithms pinned, issuer and
// audience checked, `exp` required, 30 s of clock tolerance at most; keys from a JWKS URI
// (cached; an unknown `kid` is looked up again, at most once a second and once per 30 s per kid,
// with a bounded wait) or from one PEM public key. fast-jwt verifies, get-jwks fetches keys.
import { createVerifier, TokenError } from 'fast-jwt'
import buildGetJwks from 'get-jwks'
import { OBJECT_ID } from '../schemas/fields.js'

export interface Principal {
  subject?: string
  /** The projects the caller may read: `'*'` for all. */
  projects: '*' | ReadonlySet<string>
}

export type Authentication =
  | { ok: true, principal: Principal }
  | { ok: false, reason: string, tokenSent: boolean }

export interface VerifierOptions {
  jwksUri?: string
  publicKey?: string
  algorithms: string[]
  issuer: string
  audience: string
  projectsClaim: string
  /** How long a key-set fetch may take before the token is refused (401, never 503). */
  fetchTimeoutMs?: number
}

const CLOCK_TOLERANCE_MS = 30_000
const UNKNOWN_KID_RETRY_MS = 30_000
const REFETCH_INTERVAL_MS = 1000
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/i

class KeyLookupError extends Error {}

/** Key lookup for fast-jwt: one PEM, or the JWKS with a refetch budget for unknown `kid`s. */
function keyLookup (options: VerifierOptions): (decoded: { header: { kid?: string, alg?: string } }) => Promise<string> {
  if (options.publicKey !== undefined) {
    const pem = options.publicKey.replaceAll('\\n', '\n')
    return async () => pem
  }
  const uri = new URL(options.jwksUri as string)
  const domain = `${uri.origin}/`
  const jwks = buildGetJwks({ jwksPath: `${uri.pathname}${uri.search}`, ttl: 10 * 60_000, max: 100 })
  const unknownKids = new Map<string, number>()
  let lastMiss = -Infinity
  const timeout = options.fetchTimeoutMs ?? 2000
  return async ({ header }) => {
    const { kid, alg } = header
    if (kid === undefined || alg === undefined) throw new KeyLookupError('no kid in the token header')
    // A token of another algorithm never costs a lookup (fast-jwt refuses it anyway).
    if (!options.algorithms.includes(alg)) throw new KeyLookupError('algorithm not allowed')
    const cached = jwks.cache.get(jwks.generateCacheKey(alg, kid, domain)) !== undefined
    if (!cached) {
      const now = Date.now()
      // Unknown kids cost a fetch each: at most one failed lookup a second, and one per kid every 30 s.
      if (now - (unknownKids.get(kid) ?? -Infinity) < UNKNOWN_KID_RETRY_MS || now - lastMiss < REFETCH_INTERVAL_MS) throw new KeyLookupError('unknown key')
    }
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        jwks.getPublicKey({ domain, alg, kid }),
        new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new KeyLookupError('key set unreachable')), timeout) })
      ])
    } catch (error) {
      lastMiss = Date.now()
      if (unknownKids.size > 1000) unknownKids.clear()
      unknownKids.set(kid, lastMiss)
      throw error instanceof KeyLookupError ? error : new KeyLookupError('unknown key')
    } finally {
      clearTimeout(timer)
    }
  }
}

/** Why fast-jwt refused a token, in a word the log and the metrics can use. */
function reasonOf (error: unknown): string {
  if (!(error instanceof TokenError)) return 'invalid token'
  switch (error.code) {
    case TokenError.codes.expired: return 'expired'
    case TokenError.codes.inactive: return 'not yet valid'
    case TokenError.codes.invalidSignature: return 'bad signature'
    case TokenError.codes.invalidAlgorithm: return 'algorithm not allowed'
    case TokenError.codes.missingRequiredClaim: return 'missing exp'
    case TokenError.codes.keyFetchingError: return (error.originalError as Error | undefined)?.message === 'key set unreachable' ? 'key set unreachable' : 'unknown key'
    case TokenError.codes.invalidClaimValue: return /iss/.test(error.message) ? 'wrong issuer' : /aud/.test(error.message) ? 'wrong audience' : 'invalid claim'
    case TokenError.codes.malformed: case TokenError.codes.invalidType: case TokenError.codes.missingSignature: return 'malformed'
    default: return 'invalid token'
  }
}

function projectsOf (payload: Record<string, unknown>, claim: string): Principal['projects'] | undefined {
  const value = payload[claim]
  if (value === '*') return '*'
  if (!Array.isArray(value) || !value.every((id) => typeof id === 'string' && OBJECT_ID.test(id))) return undefined
  return new Set((value as string[]).map((id) => id.toLowerCase()))
}

/** Verifies the Authorization header of a request: the caller, or why not. */
export function tokenVerifier (options: VerifierOptions): (authorization: string | undefined) => Promise<Authentication> {
  const verify = createVerifier({
    key: keyLookup(options),
    algorithms: options.algorithms as never,
    allowedIss: options.issuer,
    allowedAud: options.audience,
    requiredClaims: ['exp'],
    clockTolerance: CLOCK_TOLERANCE_MS,
    cache: 1000
  })
  return async (authorization) => {
    if (authorization === undefined || authorization === '') return { ok: false, reason: 'no token', tokenSent: false }
    const token = BEARER.exec(authorization)?.[1]
    if (token === undefined) return { ok: false, reason: 'not a bearer token', tokenSent: true }
    let payload: Record<string, unknown>
    try {
      payload = await verify(token)
    } catch (error) {
      return { ok: false, reason: reasonOf(error), tokenSent: true }
    }
    const projects = projectsOf(payload, options.projectsClaim)
    if (projects === undefined) return { ok: false, reason: `no valid ${options.projectsClaim} claim`, tokenSent: true }
    return { ok: true, principal: { projects, ...(typeof payload.sub === 'string' ? { subject: payload.sub } : {}) } }
  }
}
