import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ProjectCache } from '../list-endpoint/project-cache.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Projects known to exist or not, for PROJECT_CACHE_TTL_MS (list-endpoint/project-cache.ts). */
    projectCache: ProjectCache
  }
}

async function projectCachePlugin (fastify: FastifyInstance) {
  fastify.decorate('projectCache', new ProjectCache(fastify.config.PROJECT_CACHE_TTL_MS, fastify.config.PROJECT_CACHE_MAX))
}

export default fp(projectCachePlugin, { name: 'project-cache', dependencies: ['config'] })
