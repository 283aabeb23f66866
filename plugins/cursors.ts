import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CursorCodec } from '../list-endpoint/cursor.js'
import { DEFAULT_KEY_FILE, KEY_BYTES, keptKey } from '../lib/kept-key.js'
import { TextSeal } from '../lib/text-seal.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Signs and verifies `after` cursors and feed tokens with CURSOR_SECRET. */
    cursors: CursorCodec
    /** Seals what a client carries but must not read or change (an ETag's point), with keys from CURSOR_SECRET's. */
    textSeal: TextSeal
  }
}

const PRODUCTION = 'production requires CURSOR_SECRET, the same on every replica'

/**
 * The key that signs while CURSOR_SECRET is unset (never in production, plugins/config.ts):
 * kept in CURSOR_KEY_FILE, so that a restart of `npm start` keeps its clients' cursors and
 * tokens good; `off`, or a file that cannot be kept, gives a key of this process only.
 */
async function developmentKey (fastify: FastifyInstance): Promise<Buffer> {
  const file = fastify.config.CURSOR_KEY_FILE ?? DEFAULT_KEY_FILE
  if (file === 'off') {
    fastify.log.warn('CURSOR_SECRET is unset and CURSOR_KEY_FILE=off: cursors and feed tokens are signed ' +
      `with a random key of this process, and do not survive a restart; ${PRODUCTION}`)
    return randomBytes(KEY_BYTES)
  }
  try {
    const { key, created } = await keptKey(file)
    fastify.log.warn('CURSOR_SECRET is unset: cursors and feed tokens are signed with the development key ' +
      `${created ? 'just written to' : 'kept in'} ${file}, so that they survive a restart; ${PRODUCTION}`)
    return key
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException
    fastify.log.warn(`CURSOR_SECRET is unset and the development key cannot be kept in ${file} (${code ?? message}): ` +
      'cursors and feed tokens are signed with a random key of this process, ' +
      `and do not survive a restart; ${PRODUCTION}`)
    return randomBytes(KEY_BYTES)
  }
}

/** CURSOR_SECRET's keys (the first signs, all verify); unset, the development key. */
async function cursorsPlugin (fastify: FastifyInstance) {
  const secret = fastify.config.CURSOR_SECRET
  const keys = secret === undefined ? [await developmentKey(fastify)] : secret.split(',').map((key) => Buffer.from(key))
  fastify.decorate('cursors', new CursorCodec(keys))
  fastify.decorate('textSeal', new TextSeal(keys))
}

export default fp(cursorsPlugin, { name: 'cursors', dependencies: ['config'] })
