// Bearer tokens verified locally (docs/access-control.md, RFC 8725): algorithms pinned, `iss`, `aud`
// and `exp` required and checked, 30 s of clock tolerance at most; keys from a JWKS endpoint
// (key-set.ts: bounded fetches, cool-down, rotation) or from one PEM public key. The key is found
// before fast-jwt verifies, so that a key set that cannot be had is told apart from a bad token
// (503, not 401) and never cached as a refusal of the token.
import { createVerifier, TokenError } from 'fast-jwt'
import { OBJECT_ID } from '../schemas/fields.js'
import { KeySet, type KeyLookup } from './key-set.js'

export interface Principal {
  subject?: string
  /** The projects the caller may read: `'*'` for all. */
  projects: '*' | ReadonlySet<string>
}

export type Authentication =
  | { ok: true, principal: Principal }
  /** `unavailable`: the keys could not be had (503 AUTH_UNAVAILABLE); else the token is refused (401). */
  | { ok: false, reason: string, tokenSent: boolean, unavailable?: { retryAfterMs: number } }

export interface VerifierOptions {
  jwksUri?: string
  publicKey?: string
  algorithms: string[]
  issuer: string
  audience: string
  projectsClaim: string
  /** How long a token with an unknown key may wait for the key set, in all (the query budget bounds it). */
  keyWaitMs: number
  onKeySetFailure?: (reason: string) => void
  /** The key set's clock (its cool-down and pauses); tokens' `exp` and `nbf` are checked against the real time. */
  now?: () => number
}

const CLOCK_TOLERANCE_MS = 30_000
// RFC 6750, 2.1: the scheme (case-insensitive, RFC 9110), one or more spaces, the token.
const BEARER = /^Bearer +([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/i
const BEARER_SCHEME = /^Bearer(?: |$)/i
/** At most one key-set fetch per this long for unknown `kid`s, after one that succeeded… */
export const KEY_SET_COOLDOWN_MS = 10_000
/** …and after one that failed. */
export const KEY_SET_RETRY_MS = 2000
const KEY_SET_MAX_BYTES = 256 * 1024
const KEY_SET_MAX_AGE_MS = 10 * 60_000

/** Why fast-jwt refused a token, in a word the log and the metrics can use. */
function reasonOf (error: unknown): string {
  if (!(error instanceof TokenError)) return 'invalid token'
  switch (error.code) {
    case TokenError.codes.expired: return 'expired'
    case TokenError.codes.inactive: return 'not yet valid'
    case TokenError.codes.invalidSignature: return 'bad signature'
    case TokenError.codes.invalidAlgorithm: return 'algorithm not allowed'
    case TokenError.codes.missingRequiredClaim:
      return `missing ${/The (\w+) claim/.exec(error.message)?.[1] ?? 'claim'}`
    case TokenError.codes.invalidClaimValue:
      return /iss/.test(error.message) ? 'wrong issuer' : /aud/.test(error.message) ? 'wrong audience' : 'invalid claim'
    case TokenError.codes.malformed:
    case TokenError.codes.invalidType:
    case TokenError.codes.missingSignature: return 'malformed'
    default: return 'invalid token'
  }
}

function projectsOf (payload: Record<string, unknown>, claim: string): Principal['projects'] | undefined {
  const value = payload[claim]
  if (value === '*') return '*'
  if (!Array.isArray(value) || !value.every((id) => typeof id === 'string' && OBJECT_ID.test(id))) return undefined
  return new Set((value as string[]).map((id) => id.toLowerCase()))
}

function headerOf (encoded: string): { kid?: unknown, alg?: unknown } | undefined {
  try {
    const header: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'))
    return header !== null && typeof header === 'object' ? header : undefined
  } catch {
    return undefined
  }
}

export interface TokenVerifier {
  (authorization: string | undefined): Promise<Authentication>
  /** The key set of JWT_JWKS_URI (undefined with a PEM key). */
  keySet?: KeySet
}

/** fast-jwt's warning for a verifier given its own cache key builder (see quietKeyBuilder). */
const KEY_BUILDER_WARNING = 'FAST_JWT_CACHE_KEY_BUILDER_SECURITY_RISK'

/**
 * fast-jwt prints a warning (process.emitWarning) for every verifier that has a cache and its
 * own cacheKeyBuilder: a builder that gave two tokens one key would let one pass for the other.
 * Ours keys a token by the whole token, so no two share a key; printed for every key the
 * service verifies with, the warning would only alarm operators. That one warning, while
 * `make` runs, is not printed; any other is.
 */
export function quietKeyBuilder<T> (make: () => T): T {
  const emitWarning = process.emitWarning
  process.emitWarning = function (this: NodeJS.Process, ...args: Parameters<typeof process.emitWarning>) {
    const options: unknown = args[1]
    if (typeof options === 'object' && options !== null &&
      (options as { code?: unknown }).code === KEY_BUILDER_WARNING) return
    Reflect.apply(emitWarning, this, args)
  } as typeof process.emitWarning
  try {
    return make()
  } finally {
    process.emitWarning = emitWarning
  }
}

/** Verifies the Authorization header of a request: the caller, or why not. */
export function tokenVerifier (options: VerifierOptions): TokenVerifier {
  const verifierOf = (pem: string) => quietKeyBuilder(() => createVerifier({
    key: pem,
    algorithms: options.algorithms as never,
    allowedIss: options.issuer,
    allowedAud: options.audience,
    // fast-jwt checks iss and aud only when the token has them: required, they always are.
    requiredClaims: ['exp', 'iss', 'aud'],
    clockTolerance: CLOCK_TOLERANCE_MS,
    cache: 1000,
    // Verified tokens are remembered by the token itself, signature included: fast-jwt's
    // default key is a SHA-2 digest of it, a native Hash object per request, which cost more
    // than the rest of a remembered token's check (docs/performance.md). A token is at most
    // the 8 KiB of a header, and 1,000 of them a few MB.
    cacheKeyBuilder: (token: string) => token
  }))
  // One verifier (and its cache of verified tokens) per key; a key set fetched anew replaces them.
  const verifiers = new Map<string, ReturnType<typeof verifierOf>>()
  const verifierFor = (pem: string) => {
    let verifier = verifiers.get(pem)
    if (verifier === undefined) {
      if (verifiers.size >= 100) verifiers.clear()
      verifier = verifierOf(pem)
      verifiers.set(pem, verifier)
    }
    return verifier
  }
  // A fetch takes at most half the wait allowed, the cool-down's end the rest.
  const fetchTimeoutMs = Math.min(5000, Math.max(250, Math.floor(options.keyWaitMs / 2)))
  const keySet = options.jwksUri === undefined
    ? undefined
    : new KeySet({
      uri: options.jwksUri,
      timeoutMs: fetchTimeoutMs,
      maxBytes: KEY_SET_MAX_BYTES,
      cooldownMs: KEY_SET_COOLDOWN_MS,
      retryMs: KEY_SET_RETRY_MS,
      maxWaitMs: Math.max(0, options.keyWaitMs - fetchTimeoutMs),
      maxAgeMs: KEY_SET_MAX_AGE_MS,
      onFailure: options.onKeySetFailure,
      now: options.now
    })
  const pem = options.publicKey?.replaceAll('\\n', '\n')
  const lookup = async (kid: unknown, alg: string): Promise<KeyLookup> => {
    if (keySet === undefined) return { ok: true, pem: pem as string }
    if (typeof kid !== 'string' || kid.length === 0 || kid.length > 256) {
      return { ok: false, reason: 'unknown key', retryAfterMs: 0 }
    }
    return await keySet.key(kid, alg)
  }

  const verify: TokenVerifier = async (authorization) => {
    if (authorization === undefined || authorization === '') return { ok: false, reason: 'no token', tokenSent: false }
    const parts = BEARER.exec(authorization)
    if (parts === null) {
      // RFC 6750, 3.1: a request in another scheme (Basic, or none) sent no bearer token, and its
      // refusal names no error; `Bearer` with something else than a JWT is a malformed token.
      return BEARER_SCHEME.test(authorization)
        ? { ok: false, reason: 'malformed', tokenSent: true }
        : { ok: false, reason: 'not a bearer token', tokenSent: false }
    }
    const header = headerOf(parts[1] as string)
    if (header === undefined) return { ok: false, reason: 'malformed', tokenSent: true }
    // A token of another algorithm never costs a key lookup.
    if (typeof header.alg !== 'string' || !options.algorithms.includes(header.alg)) {
      return { ok: false, reason: 'algorithm not allowed', tokenSent: true }
    }
    const key = await lookup(header.kid, header.alg)
    if (!key.ok) {
      return key.reason === 'key set unavailable'
        ? { ok: false, reason: key.reason, tokenSent: true, unavailable: { retryAfterMs: key.retryAfterMs } }
        : { ok: false, reason: key.reason, tokenSent: true }
    }
    let payload: Record<string, unknown>
    try {
      payload = verifierFor(key.pem)(`${parts[1] as string}.${parts[2] as string}.${parts[3] as string}`)
    } catch (error) {
      return { ok: false, reason: reasonOf(error), tokenSent: true }
    }
    const projects = projectsOf(payload, options.projectsClaim)
    if (projects === undefined) return { ok: false, reason: `no valid ${options.projectsClaim} claim`, tokenSent: true }
    return { ok: true, principal: { projects, ...(typeof payload.sub === 'string' ? { subject: payload.sub } : {}) } }
  }
  if (keySet !== undefined) verify.keySet = keySet
  return verify
}
