// Scripted answers for the client's tests: a fetch that answers in turn, pages and problems as
// the service writes them, and node:test's fake timers for the waits.
import { mock } from 'node:test'
import type { Test } from 'tap'
import { createClient, type ClientOptions, type RetryEvent } from '../src/index.js'

export const PROJECT = '65cd7e3007370d3300000000'
export const BASE = 'http://listing.test/api/'

export type Answer = Response | Error | 'hang'
export interface Script { calls: Array<{ url: URL, headers: Headers }>, fetch: typeof fetch }

/** A fetch that gives the scripted answers in turn (the last one again when they run out). */
export function script (...answers: Answer[]): Script {
  const calls: Script['calls'] = []
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    calls.push({ url: new URL(String(input)), headers: new Headers(init?.headers) })
    const answer = answers[Math.min(calls.length, answers.length) - 1] as Answer
    if (answer === 'hang') {
      return await new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)))
    }
    if (answer instanceof Error) throw answer
    return answer.clone()
  }
  return { calls, fetch: fetch as typeof globalThis.fetch }
}

export const page = (data: unknown[], next?: string): Response =>
  new Response(JSON.stringify({ data, limit: data.length, skip: 0, ...(next === undefined ? {} : { next }) }),
    { headers: { 'content-type': 'application/json' } })

export const problem = (status: number, code: string, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify({
    type: 'about:blank',
    title: 'x',
    status,
    code,
    detail: `${code} detail`,
    errors: code === 'INVALID_SORT' ? [{ param: 'sort', pointer: '/0', code, message: 'Unknown sort field' }] : [],
    requestId: 'req-from-body'
  }), {
    status, headers: { 'content-type': 'application/problem+json', 'x-request-id': 'req-from-header', ...headers }
  })

/** Date and setTimeout move only when the test ticks them, until the test ends. */
export function fakeTime (t: Test): void {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 })
  t.teardown(() => { mock.timers.reset() })
}

/** Lets the client's promise callbacks run to their next wait (setImmediate is not faked). */
export const settle = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

/** The retries a client announces (onRetry comes just before the wait), taken in turn. */
export function retryQueue () {
  const events: RetryEvent[] = []
  const takers: Array<(event: RetryEvent) => void> = []
  return {
    onRetry: (event: RetryEvent): void => {
      const take = takers.shift()
      if (take === undefined) events.push(event)
      else take(event)
    },
    next: async (): Promise<RetryEvent> => events.shift() ??
      await new Promise<RetryEvent>((resolve) => { takers.push(resolve) }),
    /** Announced and not yet taken. */
    waiting: (): number => events.length
  }
}

/** Whether `promise` has settled, read at any time. */
export function watchSettled (promise: Promise<unknown>): () => boolean {
  let settled = false
  promise.then(() => { settled = true }, () => { settled = true })
  return () => settled
}

/** A client of the script, with short backoffs. */
export const client = (s: Script, options: Partial<ClientOptions> = {}) => createClient({
  baseUrl: BASE, fetch: s.fetch, retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...options
})
