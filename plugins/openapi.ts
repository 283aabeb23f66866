import fastifySwagger, { type SwaggerTransformObject } from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { PACKAGE } from '../package-info.js'

/** The OpenAPI 3 document is generated from the route schemas; Swagger UI serves it at /docs. */
async function openapiPlugin (fastify: FastifyInstance) {
  await fastify.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Listing API',
        description: 'List event-organisation collections with a strict, MongoDB-style filter language, sort, limit and skip. Every error is RFC 9457 problem+json.',
        version: PACKAGE.version,
        license: { name: 'MIT' }
      },
      // Behind a proxy that rewrites paths, "Try it out" must call the public address.
      ...(fastify.config.PUBLIC_URL === undefined ? {} : { servers: [{ url: fastify.config.PUBLIC_URL }] }),
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'With AUTH_MODE=jwt: a JWT whose projects claim lists the readable project ids, or "*"' }
        }
      },
      tags: [
        { name: 'projects', description: 'Projects and their collections' },
        { name: 'health', description: 'Liveness and readiness' }
      ]
    },
    // The path parameter first: it is what a reader fills in before any query parameter.
    transformObject: (document) => {
      const openapiObject = (document as { openapiObject: { paths?: Record<string, unknown> } }).openapiObject
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const operation of Object.values(item as Record<string, { parameters?: Array<{ in: string }> }>)) {
          operation.parameters?.sort((a, b) => Number(b.in === 'path') - Number(a.in === 'path'))
        }
      }
      return openapiObject as ReturnType<SwaggerTransformObject>
    },
    refResolver: {
      // Shared schemas keep their $id as the component name, so the document reads "Problem", not "def-0".
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`)
    }
  })
  await fastify.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true }
  })
}

export default fp(openapiPlugin, { name: 'openapi', dependencies: ['config', 'shared-schemas'] })
