import type { TObject } from '@sinclair/typebox'
import { compileListQuery, type CompileResult } from '../../list-query/compile-list-query.js'
import { buildQuerySpec } from '../../list-query/query-spec.js'

export const LIMITS = { defaultLimit: 100, maxLimit: 1000, maxSkip: 100_000 }

/** Compiles a query string for a kind as a nested (project-scoped) list would, or as /projects does. */
export function compileFor (schema: TObject, query: string, { scoped = true } = {}): CompileResult {
  return compileListQuery(query, buildQuerySpec(schema, scoped ? { scopeField: 'project' } : {}), LIMITS)
}

/** `filter=<JSON>`, encoded as a client would send it. */
export const jsonFilter = (filter: unknown): string =>
  `filter=${encodeURIComponent(typeof filter === 'string' ? filter : JSON.stringify(filter))}`

export const ID = '665f1c2e9b1d4a3f5c7e8a90'
export const ID2 = '665f1c2e9b1d4a3f5c7e8a91'
