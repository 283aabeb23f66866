import { createRequire } from 'node:module'
import zlib from 'node:zlib'
import fastifyCompress from '@fastify/compress'
import type { FastifyInstance, onRequestHookHandler, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { routeHooks } from '../lib/route-hooks.js'
import { varyOn } from '../lib/vary.js'

/** Answers smaller than this are sent as they are: compressing them saves less than it costs. */
export const COMPRESSION_THRESHOLD = 1024

/**
 * The levels that cost least CPU for their bytes on list pages, chosen with `npm run bench`
 * (docs/performance.md, table "Compression levels").
 */
export const LEVELS = { zstd: 1, br: 1, gzip: 3 } as const

/**
 * Pages up to this size (a 1,000-document page fits) are compressed in one synchronous call: a
 * zlib stream's thread-pool hand-offs cost more than compressing a list page (docs/performance.md).
 * Larger answers still stream, so that the event loop is never held for long.
 */
export const SYNC_THRESHOLD = 1024 * 1024

/** zstd needs Node ≥ 22.15 (the image's Node 24 has it); br and gzip are everywhere. */
export const ENCODINGS = typeof (zlib as { zstdCompressSync?: unknown }).zstdCompressSync === 'function'
  ? ['zstd', 'br', 'gzip'] as const
  : ['br', 'gzip'] as const

/** `negotiator`'s one method used here, as its README documents it (@types/negotiator is 0.6's: no `preferred`). */
interface EncodingNegotiator {
  encoding: (available: readonly string[], options: { preferred: readonly string[] }) => string | undefined
}
const Negotiator = createRequire(import.meta.url)('negotiator') as
  new (request: { headers: Record<string, string> }) => EncodingNegotiator

/**
 * The content coding that answers `acceptEncoding` (RFC 9110 §12.5.3): never one at q=0, `*` only for codings
 * the field does not list, the highest q, and at equal q zstd, br, gzip (those `offered`), then identity.
 * 'identity' too when nothing offered is acceptable, even after `identity;q=0` (RFC 9110 allows it).
 */
export function chooseEncoding (acceptEncoding: string, offered: readonly string[] = ENCODINGS): string {
  const preferred = [...offered, 'identity']
  // x-gzip is gzip (RFC 9110 §8.4.1.3), as @fastify/compress reads it.
  const headers = { 'accept-encoding': acceptEncoding.replace(/\bx-gzip\b/gi, 'gzip') }
  return new Negotiator({ headers }).encoding(preferred, { preferred }) ?? 'identity'
}

/** Whether an answer is compressed depends on Accept-Encoding, even when this one is not: caches must know it. */
const varyOnEncoding: onRequestHookHandler = (request, reply, done) => {
  varyOn(reply, 'accept-encoding')
  done()
}

/**
 * docs/operations.md, "Compressed answers": answers of at least 1 KiB are compressed as
 * Accept-Encoding asks — zstd where the runtime has it, then br, then gzip, at equal preference —
 * with `Vary: Accept-Encoding`; every answer of a list, its counts and its feed carries it, compressed or not.
 * COMPRESSION=off sends identity always (for an ingress that compresses itself).
 */
async function compressionPlugin (fastify: FastifyInstance) {
  if (fastify.config.COMPRESSION === 'off') return
  const zstdLevel = (zlib.constants as Record<string, number>).ZSTD_c_compressionLevel
  // Request bodies are never read (a GET with a body is refused): no route decompresses one.
  // (Before the plugin's own onRoute hook, which reads the setting; so is a HEAD route's count of onSend hooks.)
  const headHooks = new WeakMap<RouteOptions, number>()
  fastify.addHook('onRoute', (route) => {
    route.decompress = false
    if (route.method === 'HEAD') headHooks.set(route, routeHooks(route.onSend).length)
    // Counts and feeds, from their first hook on: a feed's stream sends the headers it has when it begins.
    // (A list's handler adds it itself, list-endpoint/list-handler.ts; a list's 304, conditional-requests.ts.)
    if (route.config?.countsQuery !== undefined || route.config?.feedQuery !== undefined) {
      route.onRequest = [varyOnEncoding, ...routeHooks(route.onRequest)]
    }
  })
  // @fastify/compress's own choice reads `*` as gzip, even a refused one (`gzip;q=0, *`), and never weighs identity
  // against a coding: it is handed ours instead, in place of the field. Global onSend hooks run before its route ones.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const asked = request.headers['accept-encoding']
    if (asked !== undefined) request.headers['accept-encoding'] = chooseEncoding(asked)
    done(null, payload)
  })
  await fastify.register(fastifyCompress, {
    global: true,
    encodings: [...ENCODINGS],
    threshold: COMPRESSION_THRESHOLD,
    syncThreshold: SYNC_THRESHOLD,
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: LEVELS.br } },
    // The same options reach gzip (level) and zstd (params), as @fastify/compress hands them to both.
    zlibOptions: { level: LEVELS.gzip, ...(zstdLevel === undefined ? {} : { params: { [zstdLevel]: LEVELS.zstd } }) }
  })
  // HEAD answers like GET (RFC 9110 §9.3.2): a HEAD route's last onSend hook, Fastify's own
  // (exposeHeadRoutes, its lib/head-route.js), measures and drops the body, so it must see it compressed.
  // Moved only when that hook is found where assumed; else the order stays Fastify's.
  fastify.addHook('onRoute', (route) => {
    const own = headHooks.get(route) ?? 0
    const hooks = routeHooks(route.onSend)
    if (own === 0 || hooks[own - 1]?.name !== 'headRouteOnSendHandler') return
    route.onSend = [...hooks.slice(0, own - 1), ...hooks.slice(own), ...hooks.slice(own - 1, own)]
  })
}

export default fp(compressionPlugin, { name: 'compression', dependencies: ['config', 'conditional-requests'] })
