// How the client builds a request and waits between attempts.
import type { ListName, RawQuery } from './types.js'

/** Statuses worth another attempt: the service or an ingress is busy or restarting. */
export const RETRIED = new Set([429, 502, 503, 504])

export class Retryable extends Error {
  constructor (readonly failure: unknown, readonly retryAfterMs?: number) {
    super('retryable')
  }
}

/** The longest wait a timer holds (setTimeout's 2^31 - 1 ms); a longer Retry-After is not waited for. */
export const MAX_WAIT_MS = 2 ** 31 - 1

/** The token provider's own failure: the caller's to see, not retried. */
export class TokenFailure extends Error {
  constructor (readonly failure: unknown) {
    super('token provider failed')
  }
}

export async function sleep (ms: number, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted()
  await new Promise<void>((resolve, reject) => {
    const done = (): void => {
      signal?.removeEventListener('abort', aborted)
      resolve()
    }
    const timer = setTimeout(done, ms)
    const aborted = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', aborted, { once: true })
  })
}

export function path (list: ListName, projectId: string | undefined): string {
  if (list === 'projects') return '/projects'
  if (list === 'public-projects') return '/projects/public'
  if (projectId === undefined || !/^[0-9a-fA-F]{24}$/.test(projectId)) {
    throw new TypeError(`${list} needs a projectId of 24 hexadecimal characters`)
  }
  return `/projects/${projectId}/${list}`
}

export function queryString (query: RawQuery): string {
  const params = new URLSearchParams()
  if (query.filter !== undefined && Object.keys(query.filter).length > 0) {
    params.set('filter', JSON.stringify(query.filter))
  }
  if (query.sort !== undefined) params.set('sort', typeof query.sort === 'string' ? query.sort : query.sort.join(','))
  if (query.limit !== undefined) params.set('limit', String(query.limit))
  if (query.skip !== undefined) params.set('skip', String(query.skip))
  if (query.count === true) params.set('count', 'true')
  if (query.fields !== undefined && query.fields.length > 0) params.set('fields', query.fields.join(','))
  if (query.after !== undefined) params.set('after', query.after)
  const text = params.toString()
  return text === '' ? '' : `?${text}`
}
