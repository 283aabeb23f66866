// The one implementation of a list endpoint: a route file states its path, kind and
// collection; validation, scoping, projection, paging, counting and docs come from here.
import { Type, type TObject } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { Document, ObjectId } from 'mongodb'
import type { ListQuery } from '../list-query/compile-list-query.js'
import { buildQuerySpec } from '../list-query/query-spec.js'
import { listLimits } from '../plugins/config.js'
import { ProblemError } from '../plugins/errors.js'
import { OBJECT_ID_PATTERN } from '../schemas/fields.js'
import { problemResponse } from '../schemas/problem.js'
import { describeList, listQuerystring } from './describe-query.js'
import { offSchemaGuard } from './off-schema.js'

export interface ListRouteOptions {
  /** The MongoDB collection listed. */
  collection: string
  /** The kind's schema: its declared fields are all that leave the service. */
  schema: TObject
  /** Nested lists belong to the path's project (see routes/projects/_projectId/autohooks.ts). */
  scoped: boolean
  /** A condition every result meets, whatever the filter says. */
  fixedFilter?: Document
  url?: string
  summary: string
  example: { filter: string, sort: string }
}

/** The 200 body of a list (CONTRACT.md §3); serializing through it keeps undeclared fields out. */
export function listEnvelope (schema: TObject, description?: string) {
  return Type.Object({
    data: Type.Array(Type.Ref(schema)),
    limit: Type.Integer(),
    skip: Type.Integer(),
    total: Type.Optional(Type.Integer({ description: 'Matches ignoring limit and skip; only with count=true' }))
  }, { description })
}

/** Only declared fields are read from the database; the response schema drops anything else. */
export function projectionOf (schema: TObject): Document {
  return Object.fromEntries(Object.keys(schema.properties).map((field) => [field, 1]))
}

/** ANDs two filters, keeping the flat form when they name different keys. */
function both (filter: Document, fixed: Document): Document {
  return Object.keys(fixed).some((key) => key in filter) ? { $and: [filter, fixed] } : { ...filter, ...fixed }
}

/** Whether the project exists; run beside the list, which the project scopes anyway. */
async function projectExists (fastify: FastifyInstance, id: ObjectId, options: { maxTimeMS: number, signal: AbortSignal }): Promise<boolean> {
  return await fastify.database.collection('projects').findOne({ _id: id }, { ...options, projection: { _id: 1 } }) !== null
}

function projectNotFound (id: ObjectId): ProblemError {
  const message = `No project has the id '${String(id)}'`
  return new ProblemError(404, 'PROJECT_NOT_FOUND', message, [{ param: 'projectId', pointer: '', code: 'PROJECT_NOT_FOUND', message }])
}

export function listRoute ({ collection, schema, scoped, fixedFilter, url = '/', summary, example }: ListRouteOptions) {
  return async function listRoutePlugin (fastify: FastifyInstance) {
    const { QUERY_TIMEOUT_MS } = fastify.config
    const limits = listLimits(fastify.config)
    const spec = buildQuerySpec(schema, scoped ? { scopeField: 'project' } : {})
    const projection = projectionOf(schema)
    const guard = offSchemaGuard(schema, (misfit) => fastify.offSchema.report(collection, misfit, fastify.log))

    fastify.get(url, {
      schema: {
        tags: ['projects'],
        summary,
        description: describeList(spec, limits),
        querystring: listQuerystring(spec, limits, example),
        ...(scoped ? { params: Type.Object({ projectId: Type.String({ pattern: OBJECT_ID_PATTERN, description: 'The project (24 hexadecimal characters)' }) }) } : {}),
        response: {
          200: listEnvelope(schema, `The page of ${collection}`),
          400: problemResponse('The request breaks a rule of the query language; every problem is listed'),
          ...(scoped ? { 404: problemResponse('No project has this id') } : {}),
          500: problemResponse('Unexpected failure'),
          503: problemResponse('The database is unavailable (DATABASE_UNAVAILABLE) or the query took too long (QUERY_TIMEOUT)')
        }
      },
      config: { listQuery: spec },
      // The list-query plugin and the project hook check the query string and path themselves.
      validatorCompiler: () => () => true
    }, async function list (request) {
      const { filter, sort, skip, limit, count } = request.listQuery as ListQuery
      const projectId = request.projectId
      let where = scoped ? both(filter, { project: projectId }) : filter
      if (fixedFilter !== undefined) where = both(where, fixedFilter)
      // The server stops at maxTimeMS; the signal bounds the client side too (a silent database).
      const documents = fastify.database.collection(collection)
      const [exists, data, total] = await fastify.database.bounded(async (signal) => {
        const options = { maxTimeMS: QUERY_TIMEOUT_MS, signal }
        return await Promise.all([
          scoped ? projectExists(fastify, projectId as ObjectId, options) : true,
          documents.find(where, { ...options, projection, sort, skip, limit }).toArray(),
          count ? documents.countDocuments(where, options) : undefined
        ])
      })
      if (!exists) throw projectNotFound(projectId as ObjectId)
      const page = guard(data)
      return total === undefined ? { data: page, limit, skip } : { data: page, limit, skip, total }
    })

    // CONTRACT.md §2: other methods on a list are 405, refused before the body is read or the project looked up.
    fastify.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url,
      schema: { hide: true },
      onRequest: async (request) => {
        const message = `${request.method} is not allowed here: lists answer GET and HEAD`
        throw new ProblemError(405, 'METHOD_NOT_ALLOWED', message, [{ param: 'method', pointer: '', code: 'METHOD_NOT_ALLOWED', message }], { allow: 'GET, HEAD' })
      },
      handler: async () => undefined
    })
  }
}
