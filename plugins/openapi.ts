import fastifySwagger, { type SwaggerTransformObject } from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { GROUP_BY_SCHEMA, groupByParameter, groupBySchemas } from '../counts/group-by-schema.js'
import { FILTER_SCHEMA, filterSchemas } from '../list-endpoint/describe-query.js'
import { PACKAGE } from '../lib/package-info.js'
import { problem, problemResponse } from '../schemas/problem.js'
import { HEADERS_TOO_LARGE_DETAIL } from './errors.js'
import { rateLimited } from './load-shedding.js'
import { takesListQuery } from './list-query.js'
import { preconditionFailed } from './conditional-requests.js'
import { getAndHeadOnly } from '../list-endpoint/get-only.js'

interface Parameter {
  in: string
  schema?: Record<string, unknown>
  content?: Record<string, unknown>
  example?: unknown
}

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
    'application/json': {
      schema: { $ref: `#/components/schemas/${id}` },
      ...(typeof example === 'string' ? { example: JSON.parse(example) } : {})
    }
  }
}

/** A counts route's `by`: its kind's enum component, or a custom field's name. */
function asGroupBy (parameter: Parameter): void {
  const id = parameter.schema?.[GROUP_BY_SCHEMA]
  if (typeof id !== 'string') return
  const { description, examples } = parameter.schema as { description?: string, examples?: unknown }
  parameter.schema = {
    ...groupByParameter(id),
    ...(description === undefined ? {} : { description }),
    ...(examples === undefined ? {} : { examples })
  }
}

interface Operation {
  summary?: string
  parameters?: Parameter[]
  responses?: Record<string, { content?: unknown }>
}

/** HEAD answers as GET does, headers only (RFC 9110 §9.3.2): its responses have no content. */
function withoutBodies (operation: Operation): void {
  if (operation.summary !== undefined) operation.summary = `${operation.summary} (headers only)`
  for (const response of Object.values(operation.responses ?? {})) delete response.content
}

type Response = Record<string, unknown> & { headers?: Record<string, unknown> }

const VALIDATOR = {
  etag: {
    type: 'string',
    description: 'The answer\'s weak validator: sent back in If-None-Match, it gets a 304 while the answer would be ' +
      'the same'
  },
  'cache-control': {
    type: 'string',
    const: 'no-cache',
    description: 'A cache may keep the answer, and revalidates it before each use'
  }
}
const CONDITIONAL_HEADERS = {
  'if-none-match': {
    type: 'string',
    description: 'ETags of answers kept, or `*`: 304 without a body while the answer would be the same'
  },
  'if-match': {
    type: 'string',
    description: 'Only `*` passes (any answer); entity tags give 412, as the service\'s are weak'
  }
}
const RETRY_AFTER = {
  'retry-after': { type: 'integer', minimum: 1, description: 'Seconds to wait before trying again' }
}
const RATE_LIMIT = {
  'ratelimit-limit': { type: 'integer', description: 'List requests a caller may make a minute, on this replica' },
  'ratelimit-remaining': { type: 'integer', description: 'What is left of them' },
  'ratelimit-reset': { type: 'integer', description: 'Seconds until the minute is over' }
}
const WWW_AUTHENTICATE = {
  'www-authenticate': {
    type: 'string',
    description: 'The scheme, `Bearer realm="listing-api"`, and why the token was refused (RFC 6750)'
  }
}

interface AnswerOptions {
  /** RATE_LIMIT_PER_MINUTE, when set. */
  perMinute: number | undefined
}

/**
 * What an operation may answer beside its route's own responses, added to the document only
 * (route schemas also compile the serializers): the conditional request's 304, the rate limit's
 * 429, the headers that come with them and with 400, 401 and 503, and the problems that the
 * HTTP layer raises before any route runs.
 */
function withTransportAnswers (
  schema: FastifySchema | undefined,
  route: RouteOptions,
  { perMinute }: AnswerOptions
): FastifySchema | undefined {
  // Without a response schema @fastify/swagger describes a 200 itself: left as it is.
  if (schema?.response === undefined || schema.hide === true) return schema
  const response: Record<string, Response> = { ...(schema.response as Record<string, Response> | undefined) }
  const headers = (status: string, added: Record<string, unknown>): void => {
    const entry = response[status]
    if (entry !== undefined) response[status] = { ...entry, headers: { ...entry.headers, ...added } }
  }
  if (route.config?.conditional === true) headers('200', VALIDATOR)
  if (perMinute !== undefined && takesListQuery(route.config)) {
    headers('200', RATE_LIMIT)
    response['429'] = {
      // The example's wait: any number of seconds left in the minute.
      ...problemResponse(
        'More list requests a minute than RATE_LIMIT_PER_MINUTE (RATE_LIMITED); retry after Retry-After',
        rateLimited(perMinute, 17)
      ),
      headers: { ...RETRY_AFTER, ...RATE_LIMIT }
    }
  }
  // The 200's headers, as RFC 9110 (15.4.5) asks of a 304.
  if (route.config?.conditional === true) {
    response['304'] = {
      type: 'null',
      description: 'Not modified: the If-None-Match validator still holds (no body)',
      headers: response['200']?.headers
    }
    response['412'] = problemResponse('If-Match named entity tags, which never match the weak ones of this ' +
      'service (PRECONDITION_FAILED); only If-Match: * passes', preconditionFailed())
  }
  if (response['401'] !== undefined) {
    headers('400', {
      'www-authenticate': {
        type: 'string',
        description: 'With more than one Authorization header: `error="invalid_request"` (RFC 6750)'
      }
    })
  }
  headers('401', WWW_AUTHENTICATE)
  headers('503', RETRY_AFTER)
  response.default = problemResponse(
    'A problem raised before the operation runs: URL or headers too large (431 HEADERS_TOO_LARGE, 414 URI_TOO_LONG), ' +
      'a body on GET, an Expect other than 100-continue or malformed HTTP (400, 417, 408 BAD_REQUEST)',
    problem(431, 'HEADERS_TOO_LARGE', HEADERS_TOO_LARGE_DETAIL)
  )
  if (route.config?.conditional !== true) return { ...schema, response }
  // Documented, not validated: the transform shapes the document only.
  const own = schema.headers as { properties?: Record<string, unknown> } | undefined
  return {
    ...schema,
    response,
    headers: { type: 'object', ...own, properties: { ...own?.properties, ...CONDITIONAL_HEADERS } }
  }
}

const BEARER_AUTH = {
  type: 'http',
  scheme: 'bearer',
  bearerFormat: 'JWT',
  description: 'A JWT whose projects claim lists the readable project ids, or "*"'
} as const

interface OpenApiObject { paths?: Record<string, unknown>, components?: { schemas?: Record<string, unknown> } }

/** The generated document with the filter and group-by components, and its parameters in their OpenAPI forms. */
function finishDocument (openapiObject: OpenApiObject): ReturnType<SwaggerTransformObject> {
  // JSON Schema 2020-12 as written: the route-schema conversion would fold patternProperties.
  openapiObject.components = {
    ...openapiObject.components,
    schemas: { ...openapiObject.components?.schemas, ...filterSchemas(), ...groupBySchemas() }
  }
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
}

/** The OpenAPI 3 document is generated from the route schemas; Swagger UI serves it at /docs. */
async function openapiPlugin (fastify: FastifyInstance) {
  await fastify.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Listing API',
        description: 'List event-organisation collections with a strict, MongoDB-style filter language, sort, ' +
          'limit and skip. Every error is RFC 9457 problem+json.',
        version: PACKAGE.version,
        license: { name: 'MIT', identifier: 'MIT' }
      },
      // Behind a proxy that rewrites paths, "Try it out" must call the public address.
      ...(fastify.config.PUBLIC_URL === undefined ? {} : { servers: [{ url: fastify.config.PUBLIC_URL }] }),
      // Swagger UI shows "Authorize" when a security scheme exists: only when tokens are asked for.
      ...(fastify.config.AUTH_MODE === 'jwt'
        ? { components: { securitySchemes: { bearerAuth: BEARER_AUTH } } }
        : {}),
      tags: [
        { name: 'projects', description: 'Projects and their collections' },
        {
          name: 'changes',
          description: 'Change feeds: keep a filtered copy of a list in sync. Start without since, apply the events, ' +
            'and send each answer\'s next back as since; long polls with wait, or an NDJSON stream'
        },
        { name: 'health', description: 'Liveness and readiness' }
      ]
    },
    // Every GET path answers HEAD (Fastify's exposeHeadRoutes): described, so that a validating proxy knows it.
    exposeHeadRoutes: true,
    transform: ({ schema, url, route }) => {
      const perMinute = fastify.config.RATE_LIMIT_PER_MINUTE
      return { schema: withTransportAnswers(schema, route, { perMinute }) as typeof schema, url }
    },
    transformObject: (document) => finishDocument((document as { openapiObject: OpenApiObject }).openapiObject),
    refResolver: {
      // Shared schemas keep their $id as the component name, so the document reads "Problem", not "def-0".
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`)
    }
  })
  await fastify.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    // Behind a proxy that strips PUBLIC_URL's path, the page's asset links must carry it.
    indexPrefix: fastify.config.PUBLIC_URL === undefined ? '' : new URL(fastify.config.PUBLIC_URL).pathname,
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true }
  })
  for (const url of ['/docs', '/docs/json', '/docs/yaml']) getAndHeadOnly(fastify, url, 'the API\'s documents')
}

export default fp(openapiPlugin, { name: 'openapi', dependencies: ['config', 'shared-schemas'] })
