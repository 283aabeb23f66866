import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ProjectCache } from '../list-endpoint/project-cache.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Projects known to exist or not, for PROJECT_CACHE_TTL_MS (list-endpoint/project-cache.ts). */
    projectCache: ProjectCache
  }
}

/** The cache on the app's clock: the list route asks it without saying the time. */
class ClockedProjectCache extends ProjectCache {
  constructor (ttlMs: number, maxEntries: number, readonly clock: () => number) {
    super(ttlMs, maxEntries)
  }

  override get (id: string, now = this.clock()): boolean | undefined { return super.get(id, now) }
  override set (id: string, exists: boolean, now = this.clock()): void { super.set(id, exists, now) }
}

/** `now`: the app's option (AppOptions in app.ts), a clock a test can move. */
async function projectCachePlugin (fastify: FastifyInstance, { now = Date.now }: { now?: () => number }) {
  fastify.decorate('projectCache',
    new ClockedProjectCache(fastify.config.PROJECT_CACHE_TTL_MS, fastify.config.PROJECT_CACHE_MAX, now))
}

export default fp(projectCachePlugin, { name: 'project-cache', dependencies: ['config'] })
