// What a list's route declares: its querystring and answers as the OpenAPI document shows them,
// the body its 200 is serialized through, and the fields it reads.
import { Type, type TObject } from '@sinclair/typebox'
import { ObjectId, type Document } from 'mongodb'
import type { ListLimits } from '../list-query/compile-list-query.js'
import type { QuerySpec } from '../list-query/query-spec.js'
import { ProjectParams } from '../schemas/fields.js'
import { ProblemError, internalError, problemResponse } from '../schemas/problem.js'
import { LIST_EXAMPLES } from '../schemas/list-examples.js'
import { describeList, filterSchemaId, listQuerystring } from './describe-query.js'
import {
  NO_TOKEN_MESSAGE, UNKNOWN_PROJECT_EXAMPLE, badRequestExample, databaseDown, projectNotFound
} from './list-problems.js'

/**
 * The 200 body of a list (docs/query-language.md, "The lists"); serializing through it keeps
 * undeclared fields out.
 */
export function listEnvelope (schema: TObject, description?: string) {
  return Type.Object({
    data: Type.Array(Type.Ref(schema.$id as string)),
    limit: Type.Integer(),
    skip: Type.Integer(),
    total: Type.Optional(Type.Integer({ description: 'Matches ignoring limit and skip; only with count=true' })),
    next: Type.Optional(Type.String({
      description: 'Present when more results follow: pass it as `after` ' +
        '(also sent as a `Link: <…>; rel="next"` header)'
    }))
  }, { description })
}

/** Only declared fields are read from the database; the response schema drops anything else. */
export function projectionOf (schema: TObject): Document {
  return Object.fromEntries(Object.keys(schema.properties).map((field) => [field, 1]))
}

/** What shapes a list's route schema. */
export interface ListSchemaOptions {
  collection: string
  schema: TObject
  scoped: boolean
  spec: QuerySpec
  limits: ListLimits
  summary: string
  example: { filter: string, sort: string }
  protectedByToken: boolean
  /** Tokens are verified with keys fetched from JWT_JWKS_URI: a 503 may also be AUTH_UNAVAILABLE. */
  fetchesKeys: boolean
}

/** The route schema of a list: its querystring, path parameters and every answer, with examples. */
export function listRouteSchema (
  { collection, schema, scoped, spec, limits, summary, example, protectedByToken, fetchesKeys }: ListSchemaOptions
) {
  const unavailable = 'The database is unavailable (DATABASE_UNAVAILABLE), the query took too long (QUERY_TIMEOUT) ' +
    'or the replica is overloaded or shutting down (OVERLOADED)' +
    `${fetchesKeys ? ', or the keys that verify tokens cannot be obtained now (AUTH_UNAVAILABLE)' : ''}` +
    '; retry after Retry-After'
  return {
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
        ...(LIST_EXAMPLES[collection] === undefined
          ? {}
          : { examples: [{ data: [LIST_EXAMPLES[collection]], limit: limits.defaultLimit, skip: 0 }] }),
        headers: {
          link: {
            type: 'string',
            description: 'When more results follow: `<URL of the next page>; rel="next"` (RFC 8288)'
          }
        }
      },
      400: problemResponse(
        'The request breaks a rule of the query language; every problem is listed', badRequestExample(spec, limits)
      ),
      ...(protectedByToken
        ? {
            401: problemResponse(
              'No valid bearer token (UNAUTHENTICATED)',
              ProblemError.about('authorization', 401, 'UNAUTHENTICATED', NO_TOKEN_MESSAGE)
            )
          }
        : {}),
      ...(scoped
        ? {
            404: problemResponse(
              'No project has this id, or none the caller may read',
              projectNotFound(new ObjectId(UNKNOWN_PROJECT_EXAMPLE))
            )
          }
        : {}),
      500: problemResponse('Unexpected failure', internalError()),
      503: problemResponse(unavailable, databaseDown)
    }
  }
}
