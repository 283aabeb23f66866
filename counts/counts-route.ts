// A list's counts per group (docs/counts.md): `GET <list>/counts?by=…`. The list's rules hold
// (its filter, its project, the caller's projects, the time limit); the groups are made, ordered
// and cut to `limit` by one bounded aggregation, and `total` is counted beside it.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ObjectId } from 'mongodb'
import { parseCollation } from '../database/collation.js'
import {
  COUNTS_DEFAULT_LIMIT, COUNTS_MAX_LIMIT, compileCountsQuery, type CountsQuery
} from '../list-query/compile-list-query.js'
import { groupablePaths } from '../list-query/group-by.js'
import { FILTER_SCHEMA, bracketExample, filterSchemaId } from '../list-endpoint/describe-query.js'
import { countMatching } from '../list-endpoint/count-matching.js'
import { getAndHeadOnly } from '../list-endpoint/get-only.js'
import type { ListParts } from '../list-endpoint/list-route.js'
import { databaseDown } from '../list-endpoint/list-problems.js'
import { ProjectParams } from '../schemas/fields.js'
import { ProblemError, internalError, problemResponse } from '../schemas/problem.js'
import { countPipeline, groupsOf } from './count-pipeline.js'
import { GROUP_BY_SCHEMA, groupBySchemaId } from './group-by-schema.js'

/** The 200 body of counts. */
const CountsAnswer = Type.Object({
  groups: Type.Array(Type.Object({
    // A list of types, not a union: the serializer writes it by `typeof`, where a union made it
    // compile a validator on the route's first answer and run it on every group.
    value: Type.Unsafe<string | number | boolean | null>({
      type: ['string', 'number', 'boolean', 'null'],
      description: 'The group\'s value as a list writes it (an object id as hex, a date as its period\'s start); ' +
        'null: documents without one'
    }),
    count: Type.Integer()
  }), { description: 'By descending count, then ascending value' }),
  total: Type.Integer({ description: 'The documents the filter matches' }),
  more: Type.Boolean({ description: 'Whether groups were left out by limit' })
})

export function countsRoute (fastify: FastifyInstance, list: ListParts): void {
  const { collection, scoped, spec, url, notFound } = list
  const { QUERY_TIMEOUT_MS } = fastify.config
  const collation = parseCollation(fastify.config.COLLATION)
  const inCollation = collation === undefined ? {} : { collation }
  const countsUrl = `${url}counts`
  const groupable = groupablePaths(spec).filter((path) => path !== 'customFields.<name>')
  const refused = compileCountsQuery(list.badRequestExample, spec)
  if (refused.ok) throw new Error(`${list.badRequestExample} must be refused by every list's counts`)

  fastify.get(countsUrl, {
    schema: {
      tags: ['projects'],
      summary: `Count the ${collection} per group`,
      description: `How many ${collection} per value of \`by\` (docs/counts.md): ` +
        `${groupablePaths(spec).map((path) => `\`${path}\``).join(', ')}. ` +
        'An array is counted per element; a date by its UTC day, month or year. ' +
        `The filter is the list's, with JSON or brackets (\`by=${groupable[0] ?? 'name'}&${bracketExample(spec)}\`).`,
      ...(list.protectedByToken ? { security: [{ bearerAuth: [] }] } : {}),
      querystring: Type.Object({
        // A string here; plugins/openapi.ts publishes it as the kind's enum or a custom field's name.
        by: Type.String({
          description: 'The path whose values make the groups',
          examples: [groupable[0]],
          [GROUP_BY_SCHEMA]: groupBySchemaId(list.schema.$id as string)
        }),
        filter: Type.Optional(Type.String({
          description: 'As for the list: a JSON object of conditions, described by the ' +
            `${filterSchemaId(list.schema.$id as string)} schema, or filter[…] brackets`,
          examples: [list.filterExample],
          [FILTER_SCHEMA]: filterSchemaId(list.schema.$id as string)
        })),
        limit: Type.Optional(Type.Integer({
          minimum: 1, maximum: COUNTS_MAX_LIMIT, default: COUNTS_DEFAULT_LIMIT, description: 'Groups at most'
        }))
      }),
      ...(scoped ? { params: ProjectParams() } : {}),
      response: {
        200: CountsAnswer,
        400: problemResponse(
          'The request breaks a rule of the query language, or by names no groupable path',
          ProblemError.badRequest(refused.problems)
        ),
        ...(list.protectedByToken
          ? { 401: problemResponse('No valid bearer token (UNAUTHENTICATED)', list.unauthenticated) }
          : {}),
        ...(scoped
          ? { 404: problemResponse('No project has this id, or none the caller may read', list.unknownProject) }
          : {}),
        500: problemResponse('Unexpected failure', internalError()),
        503: problemResponse(
          'The database is unavailable (DATABASE_UNAVAILABLE), the aggregation took too long (QUERY_TIMEOUT) ' +
            'or the replica is overloaded; retry after Retry-After',
          databaseDown
        )
      }
    },
    // Tokens are asked for only with AUTH_MODE=jwt: there, a list that asks none is `open`.
    config: { countsQuery: spec, open: !list.protectedByToken, conditional: true },
    validatorCompiler: () => () => true
  }, async function counts (request: FastifyRequest, reply: FastifyReply) {
    const { filter, by, limit } = request.countsQuery as CountsQuery
    const projectKey = list.projectKey(request)
    // The project's check beside the revalidation, then beside the aggregation: one round trip,
    // not two, within the budget.
    const exists = scoped
      ? list.projectExists(request, projectKey, request.projectId as ObjectId)
      : Promise.resolve(true)
    exists.catch(() => {}) // awaited below; never an unhandled rejection meanwhile
    const found = async (): Promise<void> => { if (!await exists) throw notFound(request.projectId as ObjectId) }
    const revalidated = fastify.conditional.notModified(request, reply, {
      collection, scoped, ...(scoped ? { project: projectKey } : {})
    })
    if (revalidated !== false) {
      const [, unchanged] = await Promise.all([found(), revalidated])
      if (unchanged) return await reply.send()
    }
    const where = list.where(request, filter)
    const [, [documents, total]] = await Promise.all([found(), fastify.database.bounded(async (signal) => {
      const options = { maxTimeMS: QUERY_TIMEOUT_MS, signal, ...inCollation }
      const grouping = fastify.database.timed('aggregate', () =>
        fastify.database.collection(collection).aggregate(countPipeline(where, by, limit), options).toArray())
      const counting = fastify.database.timed('aggregate', () =>
        countMatching(fastify.database.db(), collection, where, options))
      return await Promise.all([grouping, counting])
    }, request)])
    return { ...groupsOf(documents, limit), total }
  })
  getAndHeadOnly(fastify, countsUrl, 'counts')
}
