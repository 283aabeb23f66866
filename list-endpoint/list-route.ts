// The one implementation of a list endpoint: a route file states its path, kind and
// collection; validation, scoping, projection, paging, counting and docs come from here. What
// the routes beside a list (its change feed) share with it is handed back (ListParts).
import { Type, type TObject } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ObjectId, type Document } from 'mongodb'
import { collationKey, parseCollation } from '../database/collation.js'
import { listLimits, type ListQuery } from '../list-query/compile-list-query.js'
import { buildQuerySpec, type QuerySpec } from '../list-query/query-spec.js'
import { ProjectParams } from '../schemas/fields.js'
import { ProblemError, internalError, problemResponse } from '../schemas/problem.js'
import { LIST_EXAMPLES } from '../schemas/list-examples.js'
import { describeList, filterSchemaId, listQuerystring, scopeOf } from './describe-query.js'
import { valuesDocument, type CursorBinding } from './cursor.js'
import { keysetFilter } from './keyset.js'
import { bsonToJson } from './bson-json.js'
import { countMatching } from './count-matching.js'
import { decodeAt, topLevelValues, type Page } from './bson-page.js'
import { offSchemaGuard, type Misfit } from './off-schema.js'
import { keptPairs, nextUrl, pageProjection, withoutExtra } from './paging.js'
import { getAndHeadOnly } from './get-only.js'
import { BAD_REQUEST_EXAMPLE, NO_TOKEN_MESSAGE, UNKNOWN_PROJECT_EXAMPLE, badRequestExample, cursorProblem, databaseDown, projectNotFound } from './list-problems.js'
import { filterText, projectExists, readPage, sortValues, type PageRead } from './read-page.js'

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

/** The 200 body of a list (docs/query-language.md, "The lists"); serializing through it keeps undeclared fields out. */
export function listEnvelope (schema: TObject, description?: string) {
  return Type.Object({
    data: Type.Array(Type.Ref(schema.$id as string)),
    limit: Type.Integer(),
    skip: Type.Integer(),
    total: Type.Optional(Type.Integer({ description: 'Matches ignoring limit and skip; only with count=true' })),
    next: Type.Optional(Type.String({ description: 'Present when more results follow: pass it as `after` (also sent as a `Link: <…>; rel="next"` header)' }))
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

// A page's JSON shorter than this leaves as text, which Node writes with the answer's head in one
// write() where a Buffer takes a writev() (its cost: docs/performance.md). The bytes are the same.
const SMALL_ANSWER = 4096

/** Registers the list of `definition` on `fastify` (GET, HEAD, 405 for the rest); returns what its feed shares with it. */
export function registerListRoute (fastify: FastifyInstance, { collection, schema, scoped, fixedFilter, open = false, url = '/', summary, example }: ListDefinition): ListParts {
  const { QUERY_TIMEOUT_MS, PUBLIC_URL } = fastify.config
  // Whether a page is compressed depends on Accept-Encoding, even when this one is not (too
  // small, or asked without): caches must know it (plugins/compression.ts compresses).
  const varies = fastify.config.COMPRESSION === 'on'
  const limits = listLimits(fastify.config)
  // The published filter schema (describe-query.ts) assumes that kinds with a project field are nested.
  if (scoped !== (scopeOf(schema) !== undefined)) throw new Error(`${collection}: only kinds with a project field are listed under a project`)
  const spec = buildQuerySpec(schema, scoped ? { scopeField: 'project' } : {})
  const collation = parseCollation(fastify.config.COLLATION)
  // A cursor continues an order: the same sort in another collation is another query.
  const sortIn = collation === undefined ? '' : ` collation ${collationKey(collation)}`
  const projection = projectionOf(schema)
  const protectedByToken = fastify.config.AUTH_MODE === 'jwt' && !open
  const guard = offSchemaGuard(schema)
  const transcode = bsonToJson(schema, fastify.keptDocuments)
  // The head of the cursors of a compiled query on this route (its binding's digests), kept
  // for the project it was last used with: a query is bound to nothing else. With it, the
  // pairs of its query string that the next page's URL keeps: a compiled query is one text.
  const heads = new WeakMap<ListQuery, { projectKey: string, bytes: Buffer, kept: string }>()

  /** The list's where: the filter within the path's project, the fixed filter, the caller's projects. */
  const whereOf = (request: FastifyRequest, filter: Document): Document => {
    const readable = request.principal?.projects ?? '*'
    let where = scoped ? both(filter, { project: request.projectId }) : filter
    if (fixedFilter !== undefined) where = both(where, fixedFilter)
    // /projects lists only the caller's projects, ANDed so that no filter widens it.
    if (!scoped && !open && readable !== '*') where = { $and: [where, { _id: { $in: [...readable].map((id) => new ObjectId(id)) } }] }
    return where
  }

  fastify.get(url, {
    schema: {
      tags: ['projects'],
      summary,
      ...(protectedByToken ? { security: [{ bearerAuth: [] }] } : {}),
      description: describeList(spec, limits, example.filter),
      querystring: listQuerystring(spec, limits, example, filterSchemaId(schema.$id as string)),
      ...(scoped ? { params: ProjectParams() } : {}),
      response: {
        200: {
          ...listEnvelope(schema, `The page of ${collection}`),
          // A real answer (schemas/list-examples.ts), rather than one Swagger UI makes up from the schema.
          ...(LIST_EXAMPLES[collection] === undefined ? {} : { examples: [{ data: [LIST_EXAMPLES[collection]], limit: limits.defaultLimit, skip: 0 }] }),
          headers: { link: { type: 'string', description: 'When more results follow: `<URL of the next page>; rel="next"` (RFC 8288)' } }
        },
        400: problemResponse('The request breaks a rule of the query language; every problem is listed', badRequestExample(spec, limits)),
        ...(protectedByToken ? { 401: problemResponse('No valid bearer token (UNAUTHENTICATED)', ProblemError.about('authorization', 401, 'UNAUTHENTICATED', NO_TOKEN_MESSAGE)) } : {}),
        ...(scoped ? { 404: problemResponse('No project has this id, or none the caller may read', projectNotFound(new ObjectId(UNKNOWN_PROJECT_EXAMPLE))) } : {}),
        500: problemResponse('Unexpected failure', internalError()),
        503: problemResponse(`The database is unavailable (DATABASE_UNAVAILABLE), the query took too long (QUERY_TIMEOUT) or the replica is overloaded or shutting down (OVERLOADED)${protectedByToken && fastify.config.JWT_JWKS_URI !== undefined ? ', or the keys that verify tokens cannot be obtained now (AUTH_UNAVAILABLE)' : ''}; retry after Retry-After`, databaseDown)
      }
    },
    config: { listQuery: spec, open, conditional: true },
    // The list-query plugin and the project hook check the query string and path themselves.
    validatorCompiler: () => () => true
  }, async function list (request, reply) {
    const query = request.listQuery as ListQuery
    const { limit } = query
    const sortKeys = Object.keys(query.sort)
    const projectId = request.projectId as ObjectId
    const projectKey = readableProjectKey(request)
    const revalidated = unchanged(request, reply, projectKey) // false at once, without If-None-Match
    if (revalidated !== false && await revalidated) return await reply.send()
    const where = whereOf(request, query.filter)
    // What a cursor is bound to; built once, and only when a cursor is read or written.
    let bound: CursorBinding | undefined
    const binding = (): CursorBinding => (bound ??= bindingOf(query, projectId))
    const pageWhere = query.after === undefined ? where : { $and: [where, afterCursor(query, sortKeys, binding())] }
    // What is read: the fields asked for, and the sort keys a cursor needs (`extra`, not answered).
    const { projection: read, extra } = pageProjection(projection, query.fields, sortKeys)
    if (varies) varyOnEncoding(reply)
    const { page, total } = await readList(request, projectId, projectKey, query, read, where, pageWhere)
    let next: string | undefined
    if (page.starts.length > limit) {
      page.starts.length = limit
      next = nextCursor(request, reply, page, query, sortKeys, projectKey, binding)
    }
    return answer(request, reply, page, query, extra, total, next)
  })

  /** The project key of the path (its id in lower case), when the caller may read it; else 404, before any query. */
  function readableProjectKey (request: FastifyRequest): string {
    if (!scoped) return ''
    const projectKey = (request.params as { projectId: string }).projectId.toLowerCase()
    const readable = request.principal?.projects ?? '*'
    // A project outside the caller's claim is answered exactly as one that does not exist.
    if (readable !== '*' && !readable.has(projectKey)) throw projectNotFound(request.projectId as ObjectId)
    return projectKey
  }

  /** Whether the answer is the one If-None-Match names and nothing changed since (a 304); its project must still exist. */
  function unchanged (request: FastifyRequest, reply: FastifyReply, projectKey: string): false | Promise<boolean> {
    const scope = { collection, scoped, project: scoped ? projectKey : undefined }
    if (!scoped || request.headers['if-none-match'] === undefined) return fastify.conditional.notModified(request, reply, scope)
    return projectExistsNow(request, projectKey, request.projectId as ObjectId).then(async (exists) => {
      if (!exists) throw projectNotFound(request.projectId as ObjectId)
      return await fastify.conditional.notModified(request, reply, scope)
    })
  }

  /** Whether a project exists, remembered in the project cache. */
  async function projectExistsNow (request: FastifyRequest, projectKey: string, id: ObjectId): Promise<boolean> {
    const known = fastify.projectCache.get(projectKey)
    if (known !== undefined) return known
    const exists = await fastify.database.bounded(async (signal) => await projectExists(fastify, id, { maxTimeMS: QUERY_TIMEOUT_MS, signal }), request)
    fastify.projectCache.set(projectKey, exists)
    return exists
  }

  function bindingOf (query: ListQuery, projectId: ObjectId | undefined): CursorBinding {
    return {
      path: `${collection} ${url} ${String(projectId)}`,
      filter: filterText(query),
      sort: `${JSON.stringify(query.sort)}${sortIn}`,
      fields: query.fields === undefined ? '*' : [...query.fields].sort().join(',')
    }
  }

  /** The range of the documents after the cursor of `after`: checked against its signature and this very query. */
  function afterCursor (query: ListQuery, sortKeys: string[], binding: CursorBinding): Document {
    const cursor = fastify.cursors.decode(query.after as string, binding)
    if (!cursor.ok) throw cursorProblem(cursor.code, cursor.message)
    if (cursor.values.length !== sortKeys.length) throw cursorProblem('INVALID_CURSOR', 'after is not a cursor for this sort')
    return keysetFilter(query.sort, cursor.values, collation)
  }

  function varyOnEncoding (reply: FastifyReply): void {
    const vary = reply.getHeader('vary')
    reply.header('vary', vary === undefined ? 'accept-encoding' : `${String(vary)}, accept-encoding`)
  }

  /**
   * The page, one document more than asked (it tells whether a next page exists; limit=0 reads
   * none), and the count when asked, within the query's time; 404 when the project does not
   * exist. A project remembered as existing costs no query, one remembered as absent none either.
   */
  async function readList (request: FastifyRequest, projectId: ObjectId, projectKey: string, query: ListQuery, read: Document, where: Document, pageWhere: Document): Promise<PageRead> {
    const { sort, skip, limit, count } = query
    const known = scoped ? fastify.projectCache.get(projectKey) : true
    if (known === false) throw projectNotFound(projectId)
    const result = await fastify.database.bounded((signal): Promise<PageRead> => {
      const options = { maxTimeMS: QUERY_TIMEOUT_MS, signal }
      // The documents stay BSON until they are written as JSON (find-page.ts, bson-json.ts).
      const pageQuery = { filter: pageWhere, sort, projection: read, skip, limit: limit + 1, ...(collation === undefined ? {} : { collation }) }
      const reading = readPage(fastify, collection, projectId, known, limit === 0, pageQuery, options)
      if (!count) return reading
      const counting = fastify.database.timed('aggregate', () => countMatching(fastify.database.db(), collection, where, collation === undefined ? options : { ...options, collation }))
      return Promise.all([reading, counting]).then(([pageRead, counted]) => ({ ...pageRead, total: counted }))
    }, request)
    if (known === undefined) fastify.projectCache.set(projectKey, result.exists)
    if (!result.exists) throw projectNotFound(projectId)
    return result
  }

  /** The cursor of the next page, from the page's last document, and its Link header. */
  function nextCursor (request: FastifyRequest, reply: FastifyReply, page: Page, query: ListQuery, sortKeys: string[], projectKey: string, binding: () => CursorBinding): string {
    const last = query.limit - 1
    // The last document's sort keys as they are stored: copied from its bytes when they are
    // top-level fields, else only they are decoded.
    const values = topLevelValues(page, last, sortKeys) ?? valuesDocument(sortValues(page, last, sortKeys))
    let head = heads.get(query)
    if (head === undefined || head.projectKey !== projectKey) {
      head = { projectKey, bytes: fastify.cursors.head(binding()), kept: keptPairs(request.raw.url ?? '') }
      heads.set(query, head)
    }
    const next = fastify.cursors.encodeBson(head.bytes, values)
    reply.header('link', `<${nextUrl(request, next, PUBLIC_URL, head.kept)}>; rel="next"`)
    return next
  }

  /** The answer: written from the page's BSON, or from decoded documents when a nested path was read only for the cursor. */
  function answer (request: FastifyRequest, reply: FastifyReply, page: Page, query: ListQuery, extra: string[], total: number | undefined, next: string | undefined): string | Buffer | Document {
    const { limit, skip } = query
    const report = (misfit: Misfit): void => { fastify.offSchema.report(collection, misfit, request.log) }
    // A nested path read only for the cursor (`customFields.x` with fields=name) is cut out of
    // decoded documents; every other page goes from BSON to JSON directly.
    if (extra.some((path) => path.includes('.'))) {
      const data = guard(withoutExtra(page.starts.map((_, i) => decodeAt(page, i)), extra), report)
      const body: { data: Document[], limit: number, skip: number, total?: number, next?: string } = { data, limit, skip }
      if (total !== undefined) body.total = total
      if (next !== undefined) body.next = next
      return body
    }
    const tail = `,"limit":${limit},"skip":${skip}${total === undefined ? '' : `,"total":${total}`}${next === undefined ? '' : `,"next":${JSON.stringify(next)}`}}`
    reply.type('application/json; charset=utf-8')
    const json = transcode(page, extra.length === 0 ? undefined : new Set(extra), report, '{"data":', tail)
    return json.length < SMALL_ANSWER ? json.toString('utf8') : json
  }

  getAndHeadOnly(fastify, url, 'lists')
  return {
    collection,
    schema,
    scoped,
    spec,
    url: url.endsWith('/') ? url : `${url}/`,
    projection,
    protectedByToken,
    badRequestExample: BAD_REQUEST_EXAMPLE,
    filterExample: example.filter,
    unauthenticated: ProblemError.about('authorization', 401, 'UNAUTHENTICATED', NO_TOKEN_MESSAGE),
    unknownProject: projectNotFound(new ObjectId(UNKNOWN_PROJECT_EXAMPLE)),
    where: whereOf,
    projectKey: readableProjectKey,
    notFound: projectNotFound,
    projectExists: async (request, projectKey, id) => await projectExistsNow(request, projectKey, id)
  }
}
