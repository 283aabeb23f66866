// The key set's pacing (access-control/key-set.ts) on a clock the test moves: the cool-down
// between refetches for unknown `kid`s, the pause after a failed fetch, the background refresh
// of old keys. The endpoint is a function scripted here: no socket is opened.
import t, { type Test } from 'tap'
import { KeySet, type KeyLookup, type KeySetOptions } from '../../access-control/key-set.js'
import { makeKey, type TestKey } from '../helpers/tokens.js'

const COOLDOWN_MS = 10_000
const RETRY_MS = 2000
const MAX_WAIT_MS = 500
const MAX_AGE_MS = 600_000

const first = makeKey('first', 'ES256')
const second = makeKey('second', 'ES256')

/** A JWKS endpoint as a fetch function: it serves `keys`, or fails as `mode` says; `hold` keeps its answers back. */
function scriptedEndpoint (keys: TestKey[]) {
  const endpoint = {
    keys,
    mode: 'up' as 'up' | 'refuse' | 'error',
    calls: 0,
    hold: undefined as Promise<void> | undefined,
    fetch: async (_uri: string, _init: RequestInit): Promise<Response> => {
      endpoint.calls++
      await endpoint.hold
      if (endpoint.mode === 'refuse') throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') })
      if (endpoint.mode === 'error') return new Response('{"error":"internal"}', { status: 500 })
      return new Response(JSON.stringify({ keys: endpoint.keys.map((key) => key.jwk) }),
        { headers: { 'content-type': 'application/json' } })
    }
  }
  return endpoint
}

/** A clock that moves only when told, and a sleep that moves it by what it waits. */
function testClock () {
  const clock = {
    time: 1_000_000,
    sleeps: [] as number[],
    now: () => clock.time,
    advance: (ms: number) => { clock.time += ms },
    sleep: async (ms: number) => { clock.sleeps.push(ms); clock.time += ms }
  }
  return clock
}

function keySetOn (t: Test, keys: TestKey[]) {
  const endpoint = scriptedEndpoint(keys)
  const clock = testClock()
  const failures: string[] = []
  const options: KeySetOptions = {
    uri: 'https://idp.test/jwks.json',
    timeoutMs: 1000,
    maxBytes: 64 * 1024,
    cooldownMs: COOLDOWN_MS,
    retryMs: RETRY_MS,
    maxWaitMs: MAX_WAIT_MS,
    maxAgeMs: MAX_AGE_MS,
    onFailure: (reason) => { failures.push(reason) },
    now: clock.now,
    sleep: clock.sleep,
    fetch: endpoint.fetch
  }
  t.teardown(() => { endpoint.hold = undefined })
  return { keySet: new KeySet(options), endpoint, clock, failures }
}

const unknown = (retryAfterMs: number): KeyLookup => ({ ok: false, reason: 'unknown key', retryAfterMs })
const unavailable = (retryAfterMs: number): KeyLookup => ({ ok: false, reason: 'key set unavailable', retryAfterMs })
const found = (key: TestKey): KeyLookup => ({ ok: true, pem: key.publicPem })

t.test('unknown kids: one fetch at once, then none until the cool-down ends; ' +
  'its last moments are waited out', async (t) => {
  const { keySet, endpoint, clock } = keySetOn(t, [first])
  await keySet.prefetch()
  t.equal(endpoint.calls, 1, 'fetched at start')
  t.same(await keySet.key('first', 'ES256'), found(first), 'a known kid: from the cache')
  t.same(await keySet.key('nope-1', 'ES256'), unknown(COOLDOWN_MS),
    'the fetch at start does not count: an unknown kid fetches at once')
  t.equal(endpoint.calls, 2, 'one fetch')
  const storm = await Promise.all(Array.from({ length: 40 }, async (_, i) => await keySet.key(`storm-${i}`, 'ES256')))
  t.same(storm, Array(40).fill(unknown(COOLDOWN_MS)), 'within the cool-down: unknown, retry when it ends')
  t.equal(endpoint.calls, 2, '40 unknown kids, no fetch')
  clock.advance(COOLDOWN_MS - MAX_WAIT_MS - 1)
  t.same(await keySet.key('nope-2', 'ES256'), unknown(MAX_WAIT_MS + 1),
    'the end further off than a caller may wait: no fetch, the time left')
  t.equal(endpoint.calls, 2, 'no fetch')
  t.same(clock.sleeps, [], 'nothing waited')
  endpoint.keys = [first, second]
  clock.advance(1)
  t.same(await keySet.key('second', 'ES256'), found(second),
    'the end within the wait allowed: waited out, then fetched, and a new key is found')
  t.same(clock.sleeps, [MAX_WAIT_MS], 'the wait was the rest of the cool-down')
  t.equal(endpoint.calls, 3, 'one fetch more')
  t.same(await keySet.key('nope-3', 'ES256'), unknown(COOLDOWN_MS), 'a new cool-down from that fetch')
  clock.advance(COOLDOWN_MS)
  const together = await Promise.all(Array.from({ length: 20 },
    async (_, i) => await keySet.key(`together-${i}`, 'ES256')))
  t.equal(endpoint.calls, 4, '20 unknown kids at once, once the cool-down is over: one fetch, shared')
  t.same(together, Array(20).fill(unknown(COOLDOWN_MS)), 'all of them unknown, retry when the new cool-down ends')
  t.equal(keySet.fetches, endpoint.calls, 'the fetches counted')
})

t.test('a failed fetch: unavailable with the pause left, no other fetch within it, cached keys kept', async (t) => {
  const { keySet, endpoint, clock, failures } = keySetOn(t, [first])
  await keySet.prefetch()
  endpoint.mode = 'refuse'
  t.same(await keySet.key('new', 'ES256'), unavailable(RETRY_MS),
    'the fetch failed: unavailable (503), retry after the pause')
  t.same(failures, ['unreachable (connect ECONNREFUSED)'], 'the failure is heard, with its reason')
  t.equal(endpoint.calls, 2, 'one fetch, failed')
  t.same(await keySet.key('first', 'ES256'), found(first),
    'a cached key still works: a key set that cannot be had revokes nothing')
  clock.advance(RETRY_MS - MAX_WAIT_MS - 1)
  t.same(await keySet.key('new', 'ES256'), unavailable(MAX_WAIT_MS + 1), 'within the pause: no fetch, the time left')
  t.equal(endpoint.calls, 2, 'no fetch')
  endpoint.mode = 'error'
  clock.advance(1)
  t.same(await keySet.key('new', 'ES256'), unavailable(RETRY_MS),
    'its end within the wait allowed: waited out, fetched, failed again')
  t.same(clock.sleeps, [MAX_WAIT_MS], 'the wait was the rest of the pause')
  t.same(failures.at(-1), 'it answered HTTP 500')
  t.equal(endpoint.calls, 3, 'one fetch more')
  endpoint.mode = 'up'
  endpoint.keys = [first, second]
  clock.advance(RETRY_MS)
  t.same(await keySet.key('second', 'ES256'), found(second),
    'the pause over and the endpoint back: fetched at once, the new key found')
  t.same(clock.sleeps, [MAX_WAIT_MS], 'nothing more waited')
  t.equal(endpoint.calls, 4, 'one fetch more')
  t.same(await keySet.key('other', 'ES256'), unknown(COOLDOWN_MS), 'after a fetch that succeeded, the cool-down again')
})

t.test('keys older than maxAgeMs are fetched again in the background, ' +
  'the cached ones answering meanwhile', async (t) => {
  const { keySet, endpoint, clock } = keySetOn(t, [first])
  await keySet.prefetch()
  // The identity provider withdraws the first key and publishes a second.
  endpoint.keys = [second]
  let answer = (): void => {}
  endpoint.hold = new Promise((resolve) => { answer = resolve })
  clock.advance(MAX_AGE_MS)
  t.same(await keySet.key('first', 'ES256'), found(first), 'as old as maxAgeMs: kept as it is')
  t.equal(endpoint.calls, 1, 'no fetch')
  clock.advance(1)
  const lookup = keySet.key('first', 'ES256')
  const settledFirst = await Promise.race([
    lookup, new Promise((resolve) => setImmediate(() => resolve('waited for the fetch')))
  ])
  t.same(settledFirst, found(first), 'older: the cached key answers without waiting for the fetch')
  t.equal(endpoint.calls, 2, 'and a fetch is under way')
  t.same(await keySet.key('first', 'ES256'), found(first), 'asked again meanwhile: still the cached key')
  t.equal(endpoint.calls, 2, 'one fetch at a time')
  answer()
  await keySet.prefetch() // joins the fetch under way
  t.equal(endpoint.calls, 2, 'joined, not fetched anew')
  t.same(await keySet.key('second', 'ES256'), found(second), 'the refreshed set holds the new key')
  t.equal(endpoint.calls, 2, 'no fetch for a key in the refreshed set')
  t.same(await keySet.key('first', 'ES256'), unknown(COOLDOWN_MS), 'and the withdrawn key is gone')
  t.equal(endpoint.calls, 3, 'its kid, unknown now, fetched once more')
  clock.advance(MAX_AGE_MS)
  t.same(await keySet.key('second', 'ES256'), found(second))
  t.equal(endpoint.calls, 3, 'the age counts from the last fetch')
})
