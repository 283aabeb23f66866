import fastifySwagger, { type SwaggerTransformObject } from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { GROUP_BY_SCHEMA, groupByParameter, groupBySchemas } from '../counts/group-by-schema.js'
import { FILTER_SCHEMA, filterSchemas } from '../list-endpoint/describe-query.js'
import { PACKAGE } from '../lib/package-info.js'
import { withTransportAnswers } from './openapi-answers.js'

interface Parameter { in: string, schema?: Record<string, unknown>, content?: Record<string, unknown>, example?: unknown }

/**
 * A parameter whose value is JSON text (`filter`) in OpenAPI's `content` form: its schema is the
 * kind's filter component, which generators turn into types and Swagger UI into a JSON editor.
 */
function asJsonContent (parameter: Parameter): void {
  const id = parameter.schema?.[FILTER_SCHEMA]
  if (typeof id !== 'string') return
  const example = parameter.example
  delete parameter.schema
  delete parameter.example
  parameter.content = {
    'application/json': { schema: { $ref: `#/components/schemas/${id}` }, ...(typeof example === 'string' ? { example: JSON.parse(example) } : {}) }
  }
}

/** A counts route's `by`: its kind's enum component, or a custom field's name. */
function asGroupBy (parameter: Parameter): void {
  const id = parameter.schema?.[GROUP_BY_SCHEMA]
  if (typeof id !== 'string') return
  const { description, examples } = parameter.schema as { description?: string, examples?: unknown }
  parameter.schema = { ...groupByParameter(id), ...(description === undefined ? {} : { description }), ...(examples === undefined ? {} : { examples }) }
}

interface Operation { summary?: string, parameters?: Parameter[], responses?: Record<string, { content?: unknown }> }

/** HEAD answers as GET does, headers only (RFC 9110 §9.3.2): its responses have no content. */
function withoutBodies (operation: Operation): void {
  if (operation.summary !== undefined) operation.summary = `${operation.summary} (headers only)`
  for (const response of Object.values(operation.responses ?? {})) delete response.content
}

/** The OpenAPI 3 document is generated from the route schemas; Swagger UI serves it at /docs. */
async function openapiPlugin (fastify: FastifyInstance) {
  await fastify.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Listing API',
        description: 'List event-organisation collections with a strict, MongoDB-style filter language, sort, limit and skip. Every error is RFC 9457 problem+json.',
        version: PACKAGE.version,
        license: { name: 'MIT', identifier: 'MIT' }
      },
      // Behind a proxy that rewrites paths, "Try it out" must call the public address.
      ...(fastify.config.PUBLIC_URL === undefined ? {} : { servers: [{ url: fastify.config.PUBLIC_URL }] }),
      // Swagger UI shows "Authorize" when a security scheme exists: only when tokens are asked for.
      ...(fastify.config.AUTH_MODE === 'jwt'
        ? { components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A JWT whose projects claim lists the readable project ids, or "*"' } } } }
        : {}),
      tags: [
        { name: 'projects', description: 'Projects and their collections' },
        { name: 'changes', description: 'Change feeds: keep a filtered copy of a list in sync. Start without since, apply the events, and send each answer\'s next back as since; long polls with wait, or an NDJSON stream' },
        { name: 'health', description: 'Liveness and readiness' }
      ]
    },
    // Every GET path answers HEAD (Fastify's exposeHeadRoutes): described, so that a validating proxy knows it.
    exposeHeadRoutes: true,
    transform: ({ schema, url, route }) => ({ schema: withTransportAnswers(schema, route, { perMinute: fastify.config.RATE_LIMIT_PER_MINUTE }) as typeof schema, url }),
    transformObject: (document) => {
      const openapiObject = (document as { openapiObject: { paths?: Record<string, unknown>, components?: { schemas?: Record<string, unknown> } } }).openapiObject
      // JSON Schema 2020-12 as written: the route-schema conversion would fold patternProperties.
      openapiObject.components = { ...openapiObject.components, schemas: { ...openapiObject.components?.schemas, ...filterSchemas(), ...groupBySchemas() } }
      for (const item of Object.values(openapiObject.paths ?? {})) {
        for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
          // The path parameter first: it is what a reader fills in before any query parameter.
          operation.parameters?.sort((a, b) => Number(b.in === 'path') - Number(a.in === 'path'))
          operation.parameters?.forEach(asJsonContent)
          operation.parameters?.forEach(asGroupBy)
          if (method === 'head') withoutBodies(operation)
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
