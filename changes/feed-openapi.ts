// The route schema of a list's change feed, which the OpenAPI document and Swagger UI show: its
// parameters, with a filter example the feed accepts (the list's own, so that "Execute" answers
// 200 as the page comes), its answer as JSON and as an NDJSON stream (one line's schema), and its
// problems with the answers the service sends.
import { Type, type TObject } from '@sinclair/typebox'
import { FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, FEED_MAX_WAIT } from '../list-query/compile-list-query.js'
import { ProjectParams } from '../schemas/fields.js'
import type { QuerySpec } from '../list-query/query-spec.js'
import { internalError, problemResponse, type ProblemError } from '../schemas/problem.js'
import { FILTER_SCHEMA, bracketExample, filterSchemaId } from '../list-endpoint/describe-query.js'
import { expired, unavailable } from './feed-problems.js'
import { NDJSON } from './feed-stream.js'

/** What the description of a list's feed says: its list's kind, query rules and examples. */
export interface FeedDescription {
  collection: string
  schema: TObject
  scoped: boolean
  spec: QuerySpec
  /** A request every list and feed refuses: the 400 example shows the feed's answer to it. */
  badRequestExample: string
  /** A filter the feed accepts (the list's example): Swagger UI fills it in. */
  filterExample: string
  /** The list's own 401 and 404 examples, which the feed answers alike. */
  unauthenticated: ProblemError
  unknownProject: ProblemError
  protectedByToken: boolean
}

const LINK = { link: { type: 'string', description: '`<URL with since=next>; rel="next"` (RFC 8288)' } }

/** One answer's `next` and `synced`, which a stream's checkpoints carry alone. */
const position = {
  next: Type.String({ description: 'Send it back as since: the changes after this answer follow it' }),
  synced: Type.Boolean({ description: 'false while the first listing is not complete' })
}

/** A feed's events, and one line of its stream: an event, a checkpoint or the problem that ended it. */
function feedEvents (schemaId: string) {
  const events = [
    Type.Object({ type: Type.Literal('upsert'), _id: Type.String(), document: Type.Ref(schemaId) }, {
      description: 'Store or replace the document by _id: it matches the filter, as it is when the answer is read'
    }),
    Type.Object({
      type: Type.Literal('remove'),
      _id: Type.String(),
      reason: Type.Union([Type.Literal('deleted'), Type.Literal('unmatched'), Type.Literal('moved')], {
        description: 'Why, as the document is when the answer is read: deleted (it no longer exists), ' +
          'unmatched (it no longer matches the filter), moved (it is in another project now)'
      })
    }, { description: 'Delete the document if held: deleted, out of the filter, or out of the project' })
  ]
  const line = Type.Union([
    ...events,
    Type.Object(position, { description: 'A checkpoint: after every batch of events, at least every 15 s, and last' }),
    Type.Object({ problem: Type.Ref('Problem') }, {
      description: 'The last line of a stream ended early (OVERLOADED: the client read too slowly); ' +
        'resume from the last checkpoint'
    })
  ], { description: 'One line of the stream' })
  return { events, line }
}

/** The route schema of the feed of `options`' list; `badRequest` is its answer to the request every list refuses. */
export function feedOpenApi (options: FeedDescription, badRequest: ProblemError) {
  const { collection, schema, scoped, spec, protectedByToken } = options
  const filterId = filterSchemaId(schema.$id as string)
  const { events, line } = feedEvents(schema.$id as string)
  return {
    tags: ['changes'],
    summary: `Follow the changes of the ${collection}${scoped ? ' of a project' : ''}`,
    ...(protectedByToken ? { security: [{ bearerAuth: [] }] } : {}),
    description: 'Keeps a copy of the list in sync (docs/changes.md). Start without `since`: the answers list ' +
      'every match as `upsert` events (`synced` false until the listing is complete), then carry the changes. ' +
      'Always send the last `next` as `since`; on 410, or 400 `INVALID_CURSOR` of `since`, drop the copy and ' +
      'start again without it. ' +
      `With \`Accept: ${NDJSON}\` the answer is a stream of event lines and \`{ "next", "synced" }\` checkpoints ` +
      'that stays open until CHANGES_STREAM_SECONDS (300 s by default) pass: ' +
      `Swagger UI shows it when it ends, \`curl -N -H 'Accept: ${NDJSON}'\` as it comes. ` +
      `Filter as the list does, with JSON or brackets (\`${bracketExample(spec)}\`).`,
    querystring: Type.Object({
      filter: Type.Optional(Type.String({
        description: `The list's filter (same rules, same errors): a JSON object described by the ${filterId} ` +
          'schema, or filter[<field>] brackets',
        examples: [options.filterExample],
        [FILTER_SCHEMA]: filterId
      })),
      fields: Type.Optional(Type.String({ description: 'The list\'s fields' })),
      since: Type.Optional(Type.String({
        description: 'The `next` of the previous answer; leave out to start with the whole list'
      })),
      limit: Type.Optional(Type.Integer({
        minimum: 1,
        maximum: FEED_MAX_LIMIT,
        default: FEED_DEFAULT_LIMIT,
        description: 'Events per answer'
      })),
      wait: Type.Optional(Type.Integer({
        minimum: 0,
        maximum: FEED_MAX_WAIT,
        default: 0,
        description: 'Seconds to wait for a change when none is ready; a stream ignores it ' +
          '(it waits for changes until its end)'
      }))
    }, { additionalProperties: false }),
    ...(scoped ? { params: ProjectParams() } : {}),
    response: {
      200: {
        description: `The events after since (the listing first, without it); with Accept: ${NDJSON}, a stream of them`,
        headers: LINK,
        content: {
          // First: what Swagger UI asks for unless told otherwise.
          'application/json': { schema: Type.Object({ events: Type.Array(Type.Union(events)), ...position }) },
          [NDJSON]: { schema: line }
        }
      },
      400: problemResponse('The request breaks a rule of the query language, or since is not a token of this feed ' +
        '(INVALID_CURSOR, CURSOR_MISMATCH)', badRequest),
      ...(protectedByToken
        ? { 401: problemResponse('No valid bearer token (UNAUTHENTICATED)', options.unauthenticated) }
        : {}),
      ...(scoped
        ? { 404: problemResponse('No project has this id, or none the caller may read', options.unknownProject) }
        : {}),
      410: problemResponse('The database no longer holds the changes after since: start again without since ' +
        '(CHANGES_EXPIRED)', expired()),
      500: problemResponse('Unexpected failure', internalError()),
      503: problemResponse(
        'The database cannot give change feeds (CHANGES_UNAVAILABLE), is unavailable (DATABASE_UNAVAILABLE), ' +
          'took too long (QUERY_TIMEOUT), or too many requests wait on this replica (OVERLOADED); ' +
          'retry after Retry-After',
        unavailable('the database is a standalone server: change feeds need a replica set or a sharded cluster')
      )
    }
  }
}
