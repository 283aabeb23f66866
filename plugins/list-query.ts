import { METHODS } from 'node:http'
import type { FastifyContextConfig, FastifyInstance, FastifyRequest, RouteOptions, onRequestHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import {
  compileCountsQuery,
  compileFeedQuery,
  compileListQuery,
  listLimits,
  type CountsQuery,
  type FeedQuery,
  type ListQuery
} from '../list-query/compile-list-query.js'
import type { ProblemItem } from '../list-query/problems.js'
import type { QuerySpec } from '../list-query/query-spec.js'
import { RecentMap } from '../lib/recent-map.js'
import { routeHooks } from '../lib/route-hooks.js'
import { ProblemError } from '../schemas/problem.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The parsed, validated list query; set for routes whose config has `listQuery`. */
    listQuery: ListQuery | null
    /** The parsed, validated query of a change feed; set for routes whose config has `feedQuery`. */
    feedQuery: FeedQuery | null
    /** The parsed, validated query of a list's counts; set for routes whose config has `countsQuery`. */
    countsQuery: CountsQuery | null
  }
  interface FastifyContextConfig {
    /** Opts a route in: its kind's query rules (see list-query/query-spec.ts). */
    listQuery?: QuerySpec
    /** Opts a change feed in: its kind's query rules, for `filter` and `fields`. */
    feedQuery?: QuerySpec
    /** Opts a list's counts in: its kind's query rules, for `filter` and `by`. */
    countsQuery?: QuerySpec
  }
}

const COMPILED_PER_ROUTE = 1000

function rawQuery (request: FastifyRequest): string {
  const url = request.raw.url ?? ''
  const mark = url.indexOf('?')
  return mark < 0 ? '' : url.slice(mark + 1)
}

/**
 * Whether a route reads a list's query (a list, its change feed, its counts): access control and
 * the rate limit cover it.
 */
export function takesListQuery (config: FastifyContextConfig | undefined): boolean {
  return config?.listQuery !== undefined || config?.feedQuery !== undefined || config?.countsQuery !== undefined
}

/** Adds `hook` after the route's own onRequest hooks. */
function appendOnRequest (route: RouteOptions, hook: onRequestHookHandler): void {
  route.onRequest = [...routeHooks(route.onRequest), hook]
}

/** A hook that compiles the raw query string, hands the query to `keep`, or answers 400 with every problem. */
function compiling<Q> (
  compile: (raw: string) => { ok: true, query: Q } | { ok: false, problems: ProblemItem[] },
  keep: (request: FastifyRequest, query: Q) => void
): onRequestHookHandler {
  return function (request, _reply, done) {
    const result = compile(rawQuery(request))
    if (!result.ok) {
      done(ProblemError.badRequest(result.problems))
      return
    }
    keep(request, result.query)
    done()
  }
}

/**
 * Fills `request.listQuery` before validation and the handler, from the raw query string;
 * a bad request is answered 400 here, before anything reaches the database.
 */
async function listQueryPlugin (fastify: FastifyInstance) {
  const limits = listLimits(fastify.config)
  fastify.decorateRequest('listQuery', null)
  fastify.decorateRequest('feedQuery', null)
  fastify.decorateRequest('countsQuery', null)
  // Every method Node parses reaches the router, which routes nine by default, so that a list
  // answers 405 to each (list-route.ts) rather than 404. CONNECT never reaches a route.
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !fastify.supportedMethods.includes(method)) fastify.addHttpMethod(method)
  }

  fastify.addHook('onRoute', (route) => {
    const countsSpec = route.config?.countsQuery
    if (countsSpec !== undefined) {
      appendOnRequest(route, compiling(
        (raw) => compileCountsQuery(raw, countsSpec),
        (request, query) => { request.countsQuery = query }
      ))
      return
    }
    const feedSpec = route.config?.feedQuery
    if (feedSpec !== undefined) {
      // A feed's query string holds a token that changes with every answer: nothing to keep.
      appendOnRequest(route, compiling(
        (raw) => compileFeedQuery(raw, feedSpec),
        (request, query) => { request.feedQuery = query }
      ))
      return
    }
    const spec = route.config?.listQuery
    if (spec === undefined) return
    // Clients repeat their queries (polling, paging dashboards): a compiled query depends on
    // nothing but its query string and the route, so the last COMPILED_PER_ROUTE are kept.
    // ListQuery objects are never changed after compilation (list-handler.ts builds new ones).
    const compiled = new RecentMap<ListQuery>(COMPILED_PER_ROUTE)
    const compile: onRequestHookHandler = function (request, _reply, done) {
      const text = rawQuery(request)
      const known = compiled.get(text)
      if (known !== undefined) {
        request.listQuery = known
        done()
        return
      }
      const result = compileListQuery(text, spec, limits)
      if (!result.ok) {
        done(ProblemError.badRequest(result.problems))
        return
      }
      compiled.set(text, result.query)
      request.listQuery = result.query
      done()
    }
    appendOnRequest(route, compile)
  })
}

export default fp(listQueryPlugin, { name: 'list-query', dependencies: ['config', 'errors'] })
