import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { CursorCodec } from '../list-endpoint/cursor.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Signs and verifies `after` cursors with CURSOR_SECRET. */
    cursors: CursorCodec
  }
}

/** CURSOR_SECRET's keys; unset outside production, a random key of this process (said in the log). */
async function cursorsPlugin (fastify: FastifyInstance) {
  const secret = fastify.config.CURSOR_SECRET
  if (secret === undefined) {
    fastify.log.warn('CURSOR_SECRET is unset: cursors are signed with a random key of this process; they do not survive a restart and other replicas refuse them')
  }
  const keys = secret === undefined ? [randomBytes(32)] : secret.split(',').map((key) => Buffer.from(key))
  fastify.decorate('cursors', new CursorCodec(keys))
}

export default fp(cursorsPlugin, { name: 'cursors', dependencies: ['config'] })
