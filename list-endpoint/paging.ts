// What a page reads and what it leaves out: the projection for `fields` (plus the sort keys a
// cursor needs, which are not returned), and the URL of the next page for the Link header.
import type { FastifyRequest } from 'fastify'
import type { Document } from 'mongodb'
import { usableHost } from '../lib/host.js'
import { readTarget, type RequestTarget } from '../lib/request-target.js'

export interface PageProjection {
  projection: Document
  /** Paths read only to build the cursor: removed from the documents before they are sent. */
  extra: string[]
}

const covered = (path: string, fields: Iterable<string>): boolean => {
  for (const field of fields) if (path === field || path.startsWith(`${field}.`)) return true
  return false
}

/** `_id` and the fields asked for, plus the sort keys they do not cover. */
export function pageProjection (all: Document, fields: string[] | undefined, sortKeys: string[]): PageProjection {
  if (fields === undefined) return { projection: all, extra: [] }
  // `customFields` with `customFields.x` would be a path collision for MongoDB: the whole wins.
  const asked = fields.filter((field) => !covered(field, fields.filter((other) => other !== field)))
  const extra = sortKeys.filter((key) => key !== '_id' && !covered(key, asked))
  const projection: Document = { _id: 1 }
  for (const path of [...asked, ...extra]) projection[path] = 1
  return { projection, extra }
}

/** The documents without the paths read only for the cursor (and without the objects that held only them). */
export function withoutExtra (docs: Document[], extra: string[]): Document[] {
  if (extra.length === 0) return docs
  return docs.map((doc) => {
    const out = { ...doc }
    for (const path of extra) {
      const dot = path.indexOf('.')
      if (dot < 0) {
        delete out[path]
        continue
      }
      const head = path.slice(0, dot)
      const inner = out[head]
      if (inner === null || typeof inner !== 'object') continue
      const rest = { ...(inner as Document) }
      delete rest[path.slice(dot + 1)]
      if (Object.keys(rest).length === 0) delete out[head]
      else out[head] = rest
    }
    return out
  })
}

/**
 * Where absolute URLs start: PUBLIC_URL when set; else the scheme and host of an absolute-form
 * target, or of the request, which Fastify reads from X-Forwarded-Proto and X-Forwarded-Host only
 * when TRUST_PROXY trusts the peer. An unusable host gives '' (the Link is then relative to the
 * request, as RFC 8288 allows).
 */
export function baseUrl (request: FastifyRequest, publicUrl: string | undefined, target?: RequestTarget): string {
  if (publicUrl !== undefined) return publicUrl
  const host = target?.origin?.authority ?? request.host
  if (!usableHost(host)) return ''
  // URI schemes are case-insensitive (RFC 3986, 3.1): X-Forwarded-Proto may say HTTPS.
  const scheme = (target?.origin?.scheme ?? request.protocol.toLowerCase()) === 'https' ? 'https' : 'http'
  return `${scheme}://${host}`
}

/**
 * The pairs of a request URL's query string that a next page keeps: all but `skip` and
 * `after` (a feed's: all but `since`), each followed by `&`, ready for `after=<cursor>` to be
 * appended. It depends on the query string alone, so the list route keeps it with the compiled
 * query rather than splitting the URL for every page.
 */
export function keptPairs (url: string, param: 'after' | 'since' = 'after'): string {
  const mark = url.indexOf('?')
  if (mark < 0) return ''
  let kept = ''
  for (const pair of url.slice(mark + 1).split('&')) {
    const name = pair.split('=', 1)[0] ?? ''
    if (pair.length > 0 && name !== 'skip' && name !== param) kept += `${pair}&`
  }
  return kept
}

/**
 * The same request URL without `skip` and `after`, continuing after `cursor` (RFC 8288 `Link`);
 * `kept` is keptPairs() of the request's URL.
 */
export function nextUrl (
  request: FastifyRequest, cursor: string, publicUrl: string | undefined, kept: string,
  param: 'after' | 'since' = 'after'
): string {
  const target = readTarget(request.raw.url ?? '/')
  return `${baseUrl(request, publicUrl, target)}${target.path}?${kept}${param}=${cursor}`
}
