import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { getAndHeadOnly } from '../list-endpoint/get-only.js'
import { PACKAGE } from '../lib/package-info.js'

const Link = (description: string) => Type.String({ description })

const Index = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  links: Type.Object({
    docs: Link('Swagger UI: every list, its fields and operators, with "Try it out"'),
    openapi: Link('The OpenAPI 3.1 document'),
    projects: Link('The first list: projects'),
    health: Link('Liveness'),
    ready: Link('Readiness')
  }),
  feeds: Type.Array(Type.String(), {
    description: 'The change feeds, which keep a filtered copy of a list in sync: each list but /projects/public ' +
      'with /changes added ({projectId}: a project\'s id)'
  })
})

/** GET /: where to go from here, for a person or a program that found the service. */
export default async function indexRoute (fastify: FastifyInstance) {
  // Behind a proxy that rewrites paths, the links are the public ones.
  const base = fastify.config.PUBLIC_URL ?? ''
  let body: unknown
  /** The index; the feeds as the OpenAPI document names them (read once every route is known). */
  const index = () => {
    const { paths = {} } = fastify.swagger() as { paths?: Record<string, { get?: { tags?: string[] } }> }
    return {
      name: PACKAGE.name,
      version: PACKAGE.version,
      description: 'Lists of an event-organisation platform, filtered with a MongoDB-style language, ' +
        'and a change feed beside each; errors are application/problem+json.',
      links: {
        docs: `${base}/docs`,
        openapi: `${base}/docs/json`,
        projects: `${base}/projects`,
        health: `${base}/health`,
        ready: `${base}/ready`
      },
      feeds: Object.entries(paths).filter(([, item]) => item.get?.tags?.includes('changes') === true)
        .map(([path]) => `${base}${path}`)
    }
  }
  fastify.get('/', {
    schema: {
      tags: ['health'],
      summary: 'The service\'s name, version, where its docs are, and its change feeds',
      response: { 200: Index }
    }
  }, async () => (body ??= index()))
  getAndHeadOnly(fastify, '/', 'the index')
}
