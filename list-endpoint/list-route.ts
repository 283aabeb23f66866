// The one implementation of a list endpoint: a route file states its path, kind and
// collection; validation, scoping, projection, paging, counting and docs come from here. What
// the routes beside a list (its change feed) share with it is handed back (ListParts).
import type { TObject } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ObjectId, type Document } from 'mongodb'
import { listLimits } from '../list-query/compile-list-query.js'
import { buildQuerySpec, type QuerySpec } from '../list-query/query-spec.js'
import { ProblemError } from '../schemas/problem.js'
import { scopeOf } from './describe-query.js'
import { getAndHeadOnly } from './get-only.js'
import { ListHandler } from './list-handler.js'
import { BAD_REQUEST_EXAMPLE, NO_TOKEN_MESSAGE, UNKNOWN_PROJECT_EXAMPLE, projectNotFound } from './list-problems.js'
import { listRouteSchema } from './list-schema.js'

export interface ListDefinition {
  /** The MongoDB collection listed. */
  collection: string
  /** The kind's schema: its declared fields are all that leave the service. */
  schema: TObject
  /** Nested lists belong to the path's project (see routes/projects/_projectId/autohooks.ts). */
  scoped: boolean
  /** A condition every result meets, whatever the filter says. */
  fixedFilter?: Document
  /** Readable without a token, even with AUTH_MODE=jwt; such a list has no change feed. */
  open?: boolean
  url?: string
  summary: string
  example: { filter: string, sort: string }
}

/** What a list shares with the routes beside it (its change feed): its rules, examples, where and project lookup. */
export interface ListParts {
  collection: string
  schema: TObject
  scoped: boolean
  spec: QuerySpec
  /** The list's path, ending with a slash. */
  url: string
  projection: Document
  protectedByToken: boolean
  /** A request every list refuses (its 400 example), and a filter the list accepts. */
  badRequestExample: string
  filterExample: string
  /** The list's 401 and 404 examples. */
  unauthenticated: ProblemError
  unknownProject: ProblemError
  /** The list's where: the filter within the path's project, the fixed filter, the caller's projects. */
  where: (request: FastifyRequest, filter: Document) => Document
  /** The path's project key ('' when unscoped) when the caller may read it; else 404, before any query. */
  projectKey: (request: FastifyRequest) => string
  /** Whether a project exists, remembered in the project cache. */
  projectExists: (request: FastifyRequest, projectKey: string, id: ObjectId) => Promise<boolean>
  notFound: (id: ObjectId) => ProblemError
}

/**
 * Registers the list of `definition` on `fastify` (GET, HEAD, 405 for the rest); returns what its
 * feed shares with it.
 */
export function registerListRoute (
  fastify: FastifyInstance,
  { collection, schema, scoped, fixedFilter, open = false, url = '/', summary, example }: ListDefinition
): ListParts {
  // The published filter schema (describe-query.ts) assumes that kinds with a project field are nested.
  if (scoped !== (scopeOf(schema) !== undefined)) {
    throw new Error(`${collection}: only kinds with a project field are listed under a project`)
  }
  const spec = buildQuerySpec(schema, scoped ? { scopeField: 'project' } : {})
  const protectedByToken = fastify.config.AUTH_MODE === 'jwt' && !open
  const handler = new ListHandler(fastify, { collection, schema, scoped, fixedFilter, open, url })
  const routeSchema = listRouteSchema({
    collection,
    schema,
    scoped,
    spec,
    limits: listLimits(fastify.config),
    summary,
    example,
    protectedByToken,
    fetchesKeys: fastify.config.JWT_JWKS_URI !== undefined
  })
  fastify.get(url, {
    schema: routeSchema,
    config: { listQuery: spec, open, conditional: true },
    // The list-query plugin and the project hook check the query string and path themselves.
    validatorCompiler: () => () => true
  }, handler.list)
  getAndHeadOnly(fastify, url, 'lists')
  return {
    collection,
    schema,
    scoped,
    spec,
    url: url.endsWith('/') ? url : `${url}/`,
    projection: handler.projection,
    protectedByToken,
    badRequestExample: BAD_REQUEST_EXAMPLE,
    filterExample: example.filter,
    unauthenticated: ProblemError.about('authorization', 401, 'UNAUTHENTICATED', NO_TOKEN_MESSAGE),
    unknownProject: projectNotFound(new ObjectId(UNKNOWN_PROJECT_EXAMPLE)),
    where: (request, filter) => handler.where(request, filter),
    projectKey: (request) => handler.projectKey(request),
    notFound: projectNotFound,
    projectExists: async (request, projectKey, id) => await handler.projectExists(request, projectKey, id)
  }
}
