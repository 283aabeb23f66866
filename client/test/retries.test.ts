// The client's runtime against scripted answers: what is retried and for how long, what is not,
// what a ListingProblem carries, what each request sends, and that walks read nothing ahead and
// resume where they were. The waits between attempts and an attempt's time limit run on
// node:test's fake timers: the tests move the clock past them, or show it was not moved.
import { mock } from 'node:test'
import t from 'tap'
import { createClient, ListingProblem, retryAfterMs } from '../src/index.js'
import { BASE, PROJECT, client, fakeTime, page, problem, retryQueue, script, settle, watchSettled } from './scripted.js'

t.test('503 and 429 are retried after Retry-After, with at most a quarter more', async (t) => {
  fakeTime(t)
  for (const status of [503, 429]) {
    const s = script(problem(status, status === 503 ? 'DATABASE_UNAVAILABLE' : 'RATE_LIMITED', { 'retry-after': '1' }),
      page([{ _id: 'a' }]))
    const retries = retryQueue()
    const result = client(s, { onRetry: retries.onRetry }).list('activities', { projectId: PROJECT })
    const { delayMs } = await retries.next()
    t.ok(delayMs >= 1000 && delayMs <= 1250, `${status}: a wait of ${delayMs} ms for Retry-After: 1`)
    mock.timers.tick(delayMs - 1)
    await settle()
    t.equal(s.calls.length, 1, `${status}: no attempt a millisecond before the wait is over`)
    mock.timers.tick(1)
    t.same((await result).data, [{ _id: 'a' }], `${status}: the page after the retry`)
    t.equal(s.calls.length, 2)
  }
})

t.test('other 4xx and 500 are not retried: a ListingProblem with status, code, errors and requestId', async (t) => {
  for (const [status, code] of [
    [400, 'INVALID_SORT'], [401, 'UNAUTHENTICATED'], [404, 'PROJECT_NOT_FOUND'], [500, 'INTERNAL_ERROR']
  ] as const) {
    const s = script(problem(status, code), page([]))
    const error = await client(s).list('sessions', { projectId: PROJECT }).catch((e: unknown) => e)
    t.ok(error instanceof ListingProblem, `${status} is a ListingProblem`)
    t.match(error, { status, code, requestId: 'req-from-body', detail: `${code} detail` })
    t.equal(s.calls.length, 1, `${status}: one request, no retry`)
    if (code === 'INVALID_SORT') {
      t.match((error as ListingProblem).errors, [{ param: 'sort', pointer: '/0', code: 'INVALID_SORT' }])
    }
  }
})

t.test('retries are bounded in number and in total time', async (t) => {
  const always = script(problem(503, 'DATABASE_UNAVAILABLE', { 'retry-after': '0' }))
  const error = await client(always, { retry: { attempts: 3, baseDelayMs: 1 } }).list('places', { projectId: PROJECT })
    .catch((e: unknown) => e)
  t.match(error, { status: 503, code: 'DATABASE_UNAVAILABLE' })
  t.equal(always.calls.length, 3, 'three attempts in all')

  fakeTime(t)
  const slow = script(problem(429, 'RATE_LIMITED', { 'retry-after': '60' }), page([]))
  const refusing = client(slow, { retry: { totalMs: 5000 } }).list('places', { projectId: PROJECT })
    .catch((e: unknown) => e)
  const settled = watchSettled(refusing)
  await settle()
  t.ok(settled(), 'answered at once: the clock never moved')
  t.match(await refusing, { status: 429, retryAfterMs: 60_000 },
    'a wait beyond the total time is not started: the 429 is the answer')
  t.equal(slow.calls.length, 1)
})

t.test('a refused connection, an ingress 502 page and a timed-out attempt are retried', async (t) => {
  fakeTime(t)
  const s = script(new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') }),
    new Response('<html>Bad Gateway</html>', { status: 502 }), 'hang', page([{ _id: 'b' }]))
  const retries = retryQueue()
  const result = client(s, { timeoutMs: 200, onRetry: retries.onRetry }).list('teams', { projectId: PROJECT })
  const reasons: string[] = []
  for (const attempt of [1, 2, 3]) {
    // The third attempt hangs: its time limit ends it.
    if (attempt === 3) {
      await settle()
      mock.timers.tick(200)
    }
    const { reason, delayMs } = await retries.next()
    reasons.push(reason)
    mock.timers.tick(delayMs)
  }
  t.same((await result).data, [{ _id: 'b' }])
  t.equal(s.calls.length, 4)
  t.match(reasons, [/ECONNREFUSED/, /502 HTTP_502/, /TimeoutError|timeout|aborted/i])

  const hanging = script('hang')
  const hangingRetries = retryQueue()
  const failing = client(hanging, {
    timeoutMs: 150, retry: { attempts: 2, baseDelayMs: 1 }, onRetry: hangingRetries.onRetry
  }).list('teams', { projectId: PROJECT }).catch((e: unknown) => e)
  await settle()
  mock.timers.tick(149)
  await settle()
  t.equal(hangingRetries.waiting(), 0, 'an attempt waits its whole time limit')
  mock.timers.tick(1)
  mock.timers.tick((await hangingRetries.next()).delayMs)
  await settle()
  t.equal(hanging.calls.length, 2, 'then the next one starts')
  mock.timers.tick(150)
  t.equal(((await failing) as Error).name, 'TimeoutError', 'the last attempt timed out, at its time limit')
})

t.test("the caller's AbortSignal ends the call, even during a wait", async (t) => {
  fakeTime(t)
  const s = script(problem(503, 'DATABASE_UNAVAILABLE', { 'retry-after': '5' }), page([]))
  const controller = new AbortController()
  const retries = retryQueue()
  const call = client(s, { onRetry: retries.onRetry })
    .list('stewards', { projectId: PROJECT }, { signal: controller.signal }).catch((e: unknown) => e)
  const { delayMs } = await retries.next()
  mock.timers.tick(delayMs - 1)
  controller.abort(new Error('caller gave up'))
  const settled = watchSettled(call)
  await settle()
  t.ok(settled(), 'ended by the abort, a millisecond before the wait was over')
  // A call the abort did not end goes on to its next attempt here, instead of waiting for ever.
  mock.timers.tick(1)
  t.match(await call, { message: 'caller gave up' })
  t.equal(s.calls.length, 1)
})

t.test('each request: the query, a fresh token, the caller\'s request id', async (t) => {
  const s = script(problem(503, 'DATABASE_UNAVAILABLE', { 'retry-after': '0' }), page([]))
  let n = 0
  await client(s, { token: () => `token-${++n}`, requestId: () => 'from-context' }).list('sessions', {
    projectId: PROJECT,
    filter: { start: { $gte: '2024-06-15' }, 'customFields.level': 'easy' },
    sort: ['-start', '+name'],
    limit: 20,
    count: true,
    fields: ['name', 'start']
  })
  const [first, second] = s.calls
  t.equal(first?.url.pathname, `/api/projects/${PROJECT}/sessions`)
  t.same(Object.fromEntries(first?.url.searchParams ?? []), {
    filter: '{"start":{"$gte":"2024-06-15"},"customFields.level":"easy"}',
    sort: '-start,+name',
    limit: '20',
    count: 'true',
    fields: 'name,start'
  })
  t.equal(first?.headers.get('authorization'), 'Bearer token-1')
  t.equal(second?.headers.get('authorization'), 'Bearer token-2', 'the provider is asked again for the retry')
  t.equal(first?.headers.get('x-request-id'), 'from-context')

  const own = script(page([]))
  await client(own, { requestId: () => 'from-context' }).list('projects', {}, { requestId: 'given' })
  t.equal(own.calls[0]?.headers.get('x-request-id'), 'given', 'a per-call id wins')
  t.equal(own.calls[0]?.url.pathname, '/api/projects')
  t.equal(own.calls[0]?.headers.get('authorization'), null, 'no token provider, no header')

  const none = script(page([]))
  // @ts-expect-error a nested list needs its project
  await t.rejects(client(none).list('sessions', {}), TypeError)
  await t.rejects(client(none).list('sessions', { projectId: 'nope' }), /24 hexadecimal/)
  t.equal(none.calls.length, 0, 'nothing is sent')
})

t.test('walks follow next to the end and read nothing ahead', async (t) => {
  const s = script(page([{ _id: '1' }, { _id: '2' }], 'c1'), page([{ _id: '3' }, { _id: '4' }], 'c2'),
    page([{ _id: '5' }]))
  const c = client(s)
  const documents = c.all('registrations', { projectId: PROJECT, pageSize: 2, skip: 4, count: true })
  t.same((await documents.next()).value, { _id: '1' })
  t.same((await documents.next()).value, { _id: '2' })
  t.equal(s.calls.length, 1, 'the first page is all that was read while its documents are taken')
  t.same((await documents.next()).value, { _id: '3' })
  t.equal(s.calls.length, 2, 'the next page when its first document is asked for')
  const rest: unknown[] = []
  for await (const document of documents) rest.push(document)
  t.same(rest, [{ _id: '4' }, { _id: '5' }])
  t.same(s.calls.map((c) => Object.fromEntries(c.url.searchParams)), [
    { limit: '2', skip: '4', count: 'true' },
    { limit: '2', after: 'c1' },
    { limit: '2', after: 'c2' }
  ], 'skip and count on the first page only, then after')

  const pages = script(page([{ _id: '1' }], 'c1'), page([{ _id: '2' }]))
  const walk = client(pages).pages('projects', { after: 'c0' })
  t.same((await walk.next()).value?.next, 'c1')
  t.equal(pages.calls[0]?.url.searchParams.get('after'), 'c0', 'a walk resumes from a cursor')
  await walk.return(undefined)
  t.equal(pages.calls.length, 1, 'a walk left early reads no more')
})

t.test('Retry-After: seconds or an HTTP date', async (t) => {
  t.equal(retryAfterMs('3'), 3000)
  t.equal(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1)), 10_000)
  t.equal(retryAfterMs('soon'), undefined)
  t.equal(retryAfterMs(null), undefined)
})

t.test('a walk through an outage asks again for the same page: nothing lost or repeated', async (t) => {
  const refused = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') })
  const s = script(page([{ _id: '1' }, { _id: '2' }], 'c1'), problem(503, 'DATABASE_UNAVAILABLE'), refused,
    page([{ _id: '3' }, { _id: '4' }], 'c2'), page([{ _id: '5' }]))
  const reasons: string[] = []
  const walked: unknown[] = []
  for await (const document of client(s, { onRetry: (e) => reasons.push(e.reason) })
    .all('registrations', { projectId: PROJECT, pageSize: 2 })) walked.push(document)
  t.same(walked, ['1', '2', '3', '4', '5'].map((_id) => ({ _id })))
  t.same(s.calls.map((c) => c.url.searchParams.get('after')), [null, 'c1', 'c1', 'c1', 'c2'],
    'each failed attempt is asked again with the same cursor')
  t.match(reasons, [/503/, /ECONNREFUSED/])
})

t.test('revalidate: the last answer per URL is kept with its ETag, ' +
  'sent as If-None-Match, and returned on 304', async (t) => {
  const tagged = (data: unknown[], etag: string): Response =>
    new Response(JSON.stringify({ data, limit: 100, skip: 0 }), {
      status: 200, headers: { 'content-type': 'application/json', etag }
    })
  const notModified = new Response(null, { status: 304, headers: { etag: 'W/"v1.b"' } })
  const { calls, fetch } = script(tagged([{ _id: 'a' }], 'W/"v1.a"'), notModified, tagged([{ _id: 'b' }], 'W/"v1.c"'),
    tagged([{ _id: 'c' }], 'W/"v1.d"'))
  const client = createClient({ baseUrl: BASE, fetch, revalidate: { maxKept: 1 } })
  const first = await client.list('teams', { projectId: PROJECT })
  t.equal(calls[0]?.headers.get('if-none-match'), null, 'nothing kept yet')
  t.same(await client.list('teams', { projectId: PROJECT }), first, 'a 304 returns the kept page')
  t.equal(calls[1]?.headers.get('if-none-match'), 'W/"v1.a"')
  t.same((await client.list('teams', { projectId: PROJECT })).data, [{ _id: 'b' }], 'a 200 replaces it')
  await client.list('places', { projectId: PROJECT })
  await client.list('teams', { projectId: PROJECT }).catch(() => undefined)
  t.equal(calls[4]?.headers.get('if-none-match'), null, 'maxKept: 1 forgot the teams page when places came')
  const plain = script(tagged([], 'W/"v1.x"'))
  const without = createClient({ baseUrl: BASE, fetch: plain.fetch })
  await without.list('teams', { projectId: PROJECT })
  await without.list('teams', { projectId: PROJECT })
  t.equal(plain.calls[1]?.headers.get('if-none-match'), null, 'not asked for: no If-None-Match')
})
