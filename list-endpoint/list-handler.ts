// A list's request, from its compiled query to its answer: scoping, the cursor, the page and its
// count, the next cursor, and the page written from its BSON (list-route.ts registers it).
import type { TObject } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ObjectId, type CollationOptions, type Document } from 'mongodb'
import { classifyDatabaseError } from '../database/classify-error.js'
import { parseCollation } from '../database/collation.js'
import type { ListQuery } from '../list-query/compile-list-query.js'
import { filterIdentity } from '../list-query/filter-identity.js'
import { collationSuffix, fieldsKey, projectsSuffix, valuesDocument, type CursorBinding } from './cursor.js'
import { keysetFilter } from './keyset.js'
import { bsonToJson, type Transcoder } from './bson-json.js'
import { countMatching } from './count-matching.js'
import { decodeAt, topLevelValues, type Page } from './bson-page.js'
import { offSchemaGuard, type Misfit } from './off-schema.js'
import { keptPairs, nextUrl, pageProjection, withoutExtra } from './paging.js'
import { cursorProblem, projectNotFound } from './list-problems.js'
import { projectExists, readPage, sortValues, type PageRead } from './read-page.js'
import { projectionOf } from './list-schema.js'
import { unlessAborted } from '../lib/pause.js'
import { varyOn } from '../lib/vary.js'

/** What a list reads and for whom: the parts of its definition a request needs. */
export interface ListScope {
  collection: string
  schema: TObject
  scoped: boolean
  fixedFilter?: Document
  open: boolean
  url: string
}

/** A lookup that ran out of time: its own budget, the server's maxTimeMS, or the pool's wait. */
const ranOutOfTime = (error: unknown): boolean =>
  error instanceof Error && classifyDatabaseError(error)?.code === 'QUERY_TIMEOUT'

/** ANDs two filters, keeping the flat form when they name different keys. */
function both (filter: Document, fixed: Document): Document {
  return Object.keys(fixed).some((key) => key in filter) ? { $and: [filter, fixed] } : { ...filter, ...fixed }
}

// A page's JSON shorter than this leaves as text, which Node writes with the answer's head in one
// write() where a Buffer takes a writev() (its cost: docs/performance.md). The bytes are the same.
const SMALL_ANSWER = 4096

interface DecodedAnswer { data: Document[], limit: number, skip: number, total?: number, next?: string }

export class ListHandler {
  readonly projection: Document
  private readonly collation: CollationOptions | undefined
  /** A cursor continues an order: the same sort in another collation is another query. */
  private readonly sortIn: string
  /**
   * Whether a page is compressed depends on Accept-Encoding, even when this one is not: caches
   * must know it (plugins/compression.ts).
   */
  private readonly varies: boolean
  private readonly guard: ReturnType<typeof offSchemaGuard>
  private readonly transcode: Transcoder
  /**
   * The head of the cursors of a compiled query on this route (its binding's digests), kept
   * for the project (or, on /projects, the caller's projects) it was last used with: a query is
   * bound to nothing else. With it, the pairs of its query string that the next page's URL keeps:
   * a compiled query is one text.
   */
  private readonly heads = new WeakMap<ListQuery, { boundTo: string, bytes: Buffer, kept: string }>()

  constructor (private readonly fastify: FastifyInstance, private readonly scope: ListScope) {
    this.projection = projectionOf(scope.schema)
    this.collation = parseCollation(fastify.config.COLLATION)
    this.sortIn = collationSuffix(this.collation)
    this.varies = fastify.config.COMPRESSION === 'on'
    this.guard = offSchemaGuard(scope.schema)
    this.transcode = bsonToJson(scope.schema, fastify.keptDocuments)
  }

  /** The route's handler. */
  readonly list = async (
    request: FastifyRequest,
    reply: FastifyReply
  ): Promise<string | Buffer | Document | undefined> => {
    const query = request.listQuery as ListQuery
    const sortKeys = Object.keys(query.sort)
    const projectId = request.projectId as ObjectId
    const projectKey = this.projectKey(request)
    const revalidated = this.unchanged(request, reply, projectKey) // false at once, without If-None-Match
    if (revalidated !== false && await revalidated) return await reply.send()
    const where = this.where(request, query.filter)
    // What a cursor is bound to; built once, and only when a cursor is read or written.
    let bound: CursorBinding | undefined
    const binding = (): CursorBinding => (bound ??= this.bindingOf(request, query, projectId))
    const pageWhere = query.after === undefined
      ? where
      : { $and: [where, this.afterCursor(query, sortKeys, binding())] }
    // What is read: the fields asked for, and the sort keys a cursor needs (`extra`, not answered).
    const { projection: read, extra } = pageProjection(this.projection, query.fields, sortKeys)
    if (this.varies) varyOn(reply, 'accept-encoding')
    const { page, total } = await this.readList(request, projectId, projectKey, query, read, where, pageWhere)
    let next: string | undefined
    if (page.starts.length > query.limit) {
      page.starts.length = query.limit
      next = this.nextCursor(request, reply, page, query, sortKeys, projectKey, binding)
    }
    return this.answer(request, reply, page, query, extra, total, next)
  }

  /** The list's where: the filter within the path's project, the fixed filter, the caller's projects. */
  where (request: FastifyRequest, filter: Document): Document {
    const { scoped, fixedFilter, open } = this.scope
    const readable = request.principal?.projects ?? '*'
    let where = scoped ? both(filter, { project: request.projectId }) : filter
    if (fixedFilter !== undefined) where = both(where, fixedFilter)
    // /projects lists only the caller's projects, ANDed so that no filter widens it.
    if (!scoped && !open && readable !== '*') {
      where = { $and: [where, { _id: { $in: [...readable].map((id) => new ObjectId(id)) } }] }
    }
    return where
  }

  /** The project key of the path (its id in lower case), when the caller may read it; else 404, before any query. */
  projectKey (request: FastifyRequest): string {
    if (!this.scope.scoped) return ''
    const projectKey = (request.params as { projectId: string }).projectId.toLowerCase()
    const readable = request.principal?.projects ?? '*'
    // A project outside the caller's claim is answered exactly as one that does not exist.
    if (readable !== '*' && !readable.has(projectKey)) throw projectNotFound(request.projectId as ObjectId)
    return projectKey
  }

  /**
   * Whether a project exists, remembered in the project cache; the requests that want it at
   * once share a lookup on a budget of its own, each waiting within its own deadline.
   */
  async projectExists (request: FastifyRequest, projectKey: string, id: ObjectId): Promise<boolean> {
    const { fastify } = this
    const { bounded } = fastify.database
    return await fastify.projectCache.exists(projectKey, {
      ask: async () => await bounded(async (signal) =>
        await projectExists(fastify, id, { maxTimeMS: fastify.config.QUERY_TIMEOUT_MS, signal })),
      wait: async (lookup) => await bounded(async (signal) => await unlessAborted(lookup, signal), request),
      askAgain: (error) => ranOutOfTime(error) && request.databaseDeadline > Date.now()
    })
  }

  /**
   * Whether the answer is the one If-None-Match names and nothing changed since (a 304); its
   * project must still exist.
   */
  private unchanged (request: FastifyRequest, reply: FastifyReply, projectKey: string): false | Promise<boolean> {
    const { collection, scoped } = this.scope
    const scope = { collection, scoped, project: scoped ? projectKey : undefined }
    if (!scoped || request.headers['if-none-match'] === undefined) {
      return this.fastify.conditional.notModified(request, reply, scope)
    }
    return this.projectExists(request, projectKey, request.projectId as ObjectId).then(async (exists) => {
      if (!exists) throw projectNotFound(request.projectId as ObjectId)
      return await this.fastify.conditional.notModified(request, reply, scope)
    })
  }

  private bindingOf (request: FastifyRequest, query: ListQuery, projectId: ObjectId | undefined): CursorBinding {
    return {
      path: `${this.scope.collection} ${this.scope.url} ${String(projectId)}${this.projectsBound(request)}`,
      filter: filterIdentity(query.filter),
      sort: `${JSON.stringify(query.sort)}${this.sortIn}`,
      fields: fieldsKey(query.fields)
    }
  }

  /**
   * What a cursor of /projects is bound to besides its path: the caller's projects, which are its
   * list (where()). A nested list outside them is 404 (projectKey()), an open one reads no claim.
   */
  private projectsBound (request: FastifyRequest): string {
    const { scoped, open } = this.scope
    return scoped || open ? '' : projectsSuffix(request.principal?.projects ?? '*')
  }

  /**
   * The range of the documents after the cursor of `after`: checked against its signature and
   * this very query.
   */
  private afterCursor (query: ListQuery, sortKeys: string[], binding: CursorBinding): Document {
    const cursor = this.fastify.cursors.decode(query.after as string, binding)
    if (!cursor.ok) throw cursorProblem(cursor.code, cursor.message)
    if (cursor.values.length !== sortKeys.length) {
      throw cursorProblem('INVALID_CURSOR', 'after is not a cursor for this sort')
    }
    return keysetFilter(query.sort, cursor.values, this.collation)
  }

  /**
   * The page, one document more than asked (it tells whether a next page exists; limit=0 reads
   * none), and the count when asked, within the query's time; 404 when the project does not
   * exist. A project remembered as existing costs no query, one remembered as absent none either.
   */
  private async readList (
    request: FastifyRequest,
    projectId: ObjectId,
    projectKey: string,
    query: ListQuery,
    read: Document,
    where: Document,
    pageWhere: Document
  ): Promise<PageRead> {
    const { fastify, collation } = this
    const { collection, scoped } = this.scope
    const { sort, skip, limit, count } = query
    const known = scoped ? fastify.projectCache.get(projectKey) : true
    if (known === false) throw projectNotFound(projectId)
    const result = await fastify.database.bounded((signal): Promise<PageRead> => {
      const options = { maxTimeMS: fastify.config.QUERY_TIMEOUT_MS, signal }
      // The documents stay BSON until they are written as JSON (find-page.ts, bson-json.ts).
      const pageQuery = {
        filter: pageWhere,
        sort,
        projection: read,
        skip,
        limit: limit + 1,
        ...(collation === undefined ? {} : { collation })
      }
      const reading = readPage(fastify, collection, projectId, known, limit === 0, pageQuery, options)
      if (!count) return reading
      const counting = fastify.database.timed('aggregate', () => countMatching(
        fastify.database.db(),
        collection,
        where,
        collation === undefined ? options : { ...options, collation }
      ))
      return Promise.all([reading, counting]).then(([pageRead, counted]) => ({ ...pageRead, total: counted }))
    }, request)
    if (known === undefined) fastify.projectCache.set(projectKey, result.exists)
    if (!result.exists) throw projectNotFound(projectId)
    return result
  }

  /** The cursor of the next page, from the page's last document, and its Link header. */
  private nextCursor (
    request: FastifyRequest,
    reply: FastifyReply,
    page: Page,
    query: ListQuery,
    sortKeys: string[],
    projectKey: string,
    binding: () => CursorBinding
  ): string {
    const { cursors } = this.fastify
    const last = query.limit - 1
    // The last document's sort keys as they are stored: copied from its bytes when they are
    // top-level fields, else only they are decoded.
    const values = topLevelValues(page, last, sortKeys) ?? valuesDocument(sortValues(page, last, sortKeys))
    let head = this.heads.get(query)
    const boundTo = projectKey + this.projectsBound(request)
    if (head === undefined || head.boundTo !== boundTo) {
      head = { boundTo, bytes: cursors.head(binding()), kept: keptPairs(request.raw.url ?? '') }
      this.heads.set(query, head)
    }
    const next = cursors.encodeBson(head.bytes, values)
    reply.header('link', `<${nextUrl(request, next, this.fastify.config.PUBLIC_URL, head.kept)}>; rel="next"`)
    return next
  }

  /**
   * The answer: written from the page's BSON, or from decoded documents when a nested path was
   * read only for the cursor.
   */
  private answer (
    request: FastifyRequest,
    reply: FastifyReply,
    page: Page,
    query: ListQuery,
    extra: string[],
    total: number | undefined,
    next: string | undefined
  ): string | Buffer | Document {
    const { limit, skip } = query
    const report = (misfit: Misfit): void => {
      this.fastify.offSchema.report(this.scope.collection, misfit, request.log)
    }
    // A nested path read only for the cursor (`customFields.x` with fields=name) is cut out of
    // decoded documents; every other page goes from BSON to JSON directly.
    if (extra.some((path) => path.includes('.'))) {
      const data = this.guard(withoutExtra(page.starts.map((_, i) => decodeAt(page, i)), extra), report)
      const body: DecodedAnswer = { data, limit, skip }
      if (total !== undefined) body.total = total
      if (next !== undefined) body.next = next
      return body
    }
    const tail = `,"limit":${limit},"skip":${skip}` +
      `${total === undefined ? '' : `,"total":${total}`}${next === undefined ? '' : `,"next":${JSON.stringify(next)}`}}`
    reply.type('application/json; charset=utf-8')
    const json = this.transcode(page, extra.length === 0 ? undefined : new Set(extra), report, '{"data":', tail)
    return json.length < SMALL_ANSWER ? json.toString('utf8') : json
  }
}
