// What the client does when the things around it misbehave: a token provider that hangs or fails,
// a proxy's page where JSON was due, a Retry-After out of bounds or malformed, a caller that
// changes a page it was given, a caller that aborts in the middle of a feed's answer.
import { mock } from 'node:test'
import t from 'tap'
import { ListingProblem, retryAfterMs } from '../src/index.js'
import { PROJECT, client, fakeTime, page, problem, retryQueue, script, settle, watchSettled } from './scripted.js'

t.test('a token provider that hangs: the caller\'s abort and the attempt\'s time limit end its wait', async (t) => {
  fakeTime(t)
  const s = script(page([{ _id: 'a' }]))
  let asked = 0
  const hanging = async (): Promise<string> => { asked++; return await new Promise<string>(() => {}) }
  const controller = new AbortController()
  const call = client(s, { token: hanging, timeoutMs: 10_000 })
    .list('places', { projectId: PROJECT }, { signal: controller.signal }).catch((e: unknown) => e)
  await settle()
  controller.abort(new Error('caller gave up'))
  t.match(await call, { message: 'caller gave up' }, 'ended by the abort, the clock never moved')
  t.equal(s.calls.length, 0, 'nothing was sent without a token')

  const retries = retryQueue()
  let n = 0
  const slowThenFine = async (): Promise<string> => ++n === 1 ? await new Promise<string>(() => {}) : 'token-2'
  const retried = client(s, { token: slowThenFine, timeoutMs: 200, onRetry: retries.onRetry })
    .list('places', { projectId: PROJECT })
  await settle()
  mock.timers.tick(199)
  await settle()
  t.equal(retries.waiting(), 0, 'the provider has the whole time limit')
  mock.timers.tick(1)
  const { reason, delayMs } = await retries.next()
  t.match(reason, /^TimeoutError: no answer within 200 ms$/, 'the attempt ran out of time waiting for its token')
  mock.timers.tick(delayMs)
  t.same((await retried).data, [{ _id: 'a' }], 'the next attempt asked again, and went on')
  t.equal(s.calls.at(-1)?.headers.get('authorization'), 'Bearer token-2')
  t.equal(asked, 1)
})

t.test('a token provider that fails: its error is the answer, not retried', async (t) => {
  const s = script(page([]))
  let asked = 0
  const failing = async (): Promise<string> => { asked++; throw new Error('signed out') }
  await t.rejects(client(s, { token: failing }).list('places', { projectId: PROJECT }), { message: 'signed out' })
  t.equal(asked, 1, 'asked once')
  t.equal(s.calls.length, 0)
})

t.test('a 200 that is not JSON (a proxy\'s sign-in page) is a ListingProblem at once, not ten attempts', async (t) => {
  const s = script(new Response('<html>Sign in</html>',
    { status: 200, headers: { 'content-type': 'text/html', 'x-request-id': 'at-the-proxy' } }))
  const error = await client(s).list('teams', { projectId: PROJECT }).catch((e: unknown) => e)
  t.ok(error instanceof ListingProblem)
  t.match(error, { status: 200, code: 'INVALID_RESPONSE', requestId: 'at-the-proxy', detail: /<html>Sign in/ })
  t.equal(s.calls.length, 1)
})

t.test('Retry-After: only the HTTP-date forms are dates; anything else is not a wait', async (t) => {
  const now = Date.UTC(1994, 10, 6, 8, 49, 27)
  for (const date of ['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994']) {
    t.equal(retryAfterMs(date, now), 10_000, date)
  }
  for (const odd of ['1.5', '-1', '2 x', '1e3', 'Nov 6 1994', '+5']) {
    t.equal(retryAfterMs(odd, now), undefined, `"${odd}"`)
  }
  t.equal(retryAfterMs(' 2 ', now), 2000, 'seconds with spaces around')
})

t.test('a malformed Retry-After backs off as if there were none, instead of retrying at once', async (t) => {
  fakeTime(t)
  // The backoff is full jitter (a random share of the step): the share is pinned near the whole
  // step, so that a wait of 0 (retrying at once) or of 1.5 s read from the header tells.
  const random = mock.method(Math, 'random', () => 0.999)
  t.teardown(() => { random.mock.restore() })
  const s = script(problem(503, 'DATABASE_UNAVAILABLE', { 'retry-after': '1.5' }), page([{ _id: 'a' }]))
  const retries = retryQueue()
  const result = client(s, { retry: { baseDelayMs: 250, maxDelayMs: 5000 }, onRetry: retries.onRetry })
    .list('teams', { projectId: PROJECT })
  const { delayMs } = await retries.next()
  t.equal(delayMs, 250, 'the first backoff step, as if no Retry-After had come')
  mock.timers.tick(249)
  await settle()
  t.equal(s.calls.length, 1, 'not asked again before the backoff is over')
  mock.timers.tick(1)
  t.same((await result).data, [{ _id: 'a' }], 'then asked again, and answered')
  t.equal(s.calls.length, 2)
})

t.test('a Retry-After longer than a timer can hold is not waited for, whatever the total time allows', async (t) => {
  fakeTime(t)
  const s = script(problem(429, 'RATE_LIMITED', { 'retry-after': '3000000' }), page([]))
  const answer = client(s, { retry: { totalMs: Infinity } }).list('teams', { projectId: PROJECT })
    .catch((e: unknown) => e)
  const settled = watchSettled(answer)
  await settle()
  t.ok(settled(), 'answered at once')
  t.match(await answer, { status: 429, retryAfterMs: 3_000_000_000 })
  t.equal(s.calls.length, 1)
})

t.test('revalidate: a 304 gives the page as the service sent it, not as a caller changed it', async (t) => {
  const tagged = new Response(JSON.stringify({
    data: [{ _id: '1', name: 'A' }, { _id: '2', name: 'B' }], limit: 100, skip: 0
  }), { headers: { 'content-type': 'application/json', etag: 'W/"v1.a"' } })
  const s = script(tagged, new Response(null, { status: 304, headers: { etag: 'W/"v1.a"' } }))
  const c = client(s, { revalidate: true })
  const first = await c.list('teams', { projectId: PROJECT })
  first.data.pop()
  ;(first.data[0] as { name?: string }).name = 'changed here'
  const second = await c.list('teams', { projectId: PROJECT })
  t.equal(s.calls[1]?.headers.get('if-none-match'), 'W/"v1.a"')
  t.not(second, first, 'another object')
  t.same(second.data, [{ _id: '1', name: 'A' }, { _id: '2', name: 'B' }])
})

t.test('changes(): after the caller aborts, no event more and no token saved', async (t) => {
  const answer = {
    events: [{ type: 'remove', _id: 'a', reason: 'moved' }, { type: 'upsert', _id: 'b', document: { _id: 'b' } }],
    next: 't2',
    synced: true
  }
  const s = script(new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } }))
  const controller = new AbortController()
  const tokens: string[] = []
  const seen: string[] = []
  const feed = client(s).changes('registrations', {
    projectId: PROJECT, since: 't1', onToken: (next) => { tokens.push(next) }, onExpired: () => {}
  }, { signal: controller.signal })
  const error = await (async () => {
    for await (const event of feed) {
      seen.push(event._id)
      controller.abort(new Error('stop'))
    }
  })().catch((e: unknown) => e)
  t.match(error, { message: 'stop' })
  t.same(seen, ['a'], 'the event being taken when the caller aborted was the last')
  t.same(tokens, [], 'no token past events the program did not take')
})
