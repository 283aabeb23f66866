// Waiting and streaming feeds (docs/changes.md): a waiting request answers as soon as a change
// of its project is committed, takes no database connection while it waits, ends with what it
// has when the service stops; CHANGES_MAX_WAITING bounds waits and streams; a stream carries
// event lines and checkpoints, is never compressed, ends with a checkpoint, and ends a reader
// that falls too far behind with a problem line; Accept chooses it as RFC 9110 weighs it.
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import { ObjectId, type Db } from 'mongodb'
import t, { type Test } from 'tap'
import { FEED_MAX_WAIT } from '../../list-query/compile-list-query.js'
import type { Config } from '../../schemas/config.js'
import { build } from '../helpers/build.js'
import { FeedCopy, feedProject, requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'
import { until } from '../helpers/until.js'

const feeds = await requireChangeStreams(t)

t.setTimeout(120_000)

async function setUp (t: Test, config: Partial<Config> = {}) {
  const fastify = await build(t, { config: { CURSOR_SECRET: 'a-waiting-test-secret-of-32-bytes-long', ...config } })
  const db = fastify.mongo.db as Db
  const { project, path } = await feedProject(db, 'registrations')
  const copy = new FeedCopy(path)
  await copy.catchUp(async (url) => await fastify.inject(url))
  return { fastify, db, project, path, copy }
}

t.test('a waiting request answers as soon as a change of its project comes, not another\'s', feeds, async (t) => {
  const { fastify, db, project, copy } = await setUp(t)
  const hub = fastify.changes.hub('registrations', true)
  let answered = false
  // The longest wait: only the change can end it while the test runs (no stop, no client leaving).
  const sent = Date.now()
  const answering = fastify.inject(copy.url(`wait=${FEED_MAX_WAIT}`)).finally(() => { answered = true })
  // Another project's feed waits beside it: its answer shows when the stream has brought that project's change.
  const elsewhere = new ObjectId()
  await db.collection('projects').insertOne({ _id: elsewhere, name: 'E' })
  const other = new FeedCopy(`/projects/${String(elsewhere)}/registrations/changes`)
  await other.catchUp(async (url) => await fastify.inject(url))
  const otherAnswering = fastify.inject(other.url('wait=10'))
  t.ok(await until(() => hub.waiting === 2, 15_000), 'both requests wait on the shared stream')
  const { insertedId: elsewhereId } = await db.collection('registrations').insertOne({ project: elsewhere, role: 'elsewhere' })
  t.same((JSON.parse((await otherAnswering).body) as FeedAnswer).events.map((event) => event._id), [elsewhereId.toHexString()], 'the other project\'s request has its change')
  t.notOk(answered, 'the other project\'s change did not end this wait')
  t.equal(hub.waiting, 1, 'this request still waits on the stream')
  const { insertedId } = await db.collection('registrations').insertOne({ project, role: 'volunteer' })
  const res = await answering
  const answer = JSON.parse(res.body) as FeedAnswer
  t.same(answer.events.map((event) => event._id), [insertedId.toHexString()], 'its own project\'s change, and only that')
  // Its deadline would have answered too (with the change, read then): the answer came before it.
  t.ok(Date.now() < sent + FEED_MAX_WAIT * 1000, 'woken by the change, before the wait\'s deadline')
})

t.test('a wait without changes waits on the stream until wait seconds after the request, then answers with no event and a token', feeds, async (t) => {
  const { fastify, copy } = await setUp(t)
  // When a wait with no change ends is test/changes/waiters.test.ts's: here, what the route asks of it.
  const hub = fastify.changes.hub('registrations', true)
  const asked: Array<{ until: number, at: number }> = []
  const nextWake = hub.nextWake.bind(hub)
  hub.nextWake = async (...args) => {
    asked.push({ until: args[1], at: Date.now() })
    await nextWake(...args)
  }
  const sent = Date.now()
  const res = await fastify.inject(copy.url('wait=1'))
  const answer = JSON.parse(res.body) as FeedAnswer
  t.equal(res.statusCode, 200)
  t.same(answer.events, [])
  t.ok(answer.synced)
  t.equal((await fastify.inject(`${copy.path}?since=${encodeURIComponent(answer.next)}`)).statusCode, 200, 'a token the feed goes on from')
  t.match(res.headers.link, /rel="next"/)
  t.ok(asked.length >= 1, 'the request waited on the shared stream')
  const first = asked[0] as { until: number, at: number }
  // The route reads the clock between the request's sending and its first wait.
  t.ok(first.until >= sent + 1000 && first.until <= first.at + 1000, 'until one second after the request came')
  t.ok(asked.every((wait) => wait.until === first.until), 'every wake of the request keeps that deadline')
  t.equal(hub.waiting, 0, 'and it waits no more')
})

t.test('CHANGES_MAX_WAITING bounds the requests that wait; waiting takes no connection from lists', feeds, async (t) => {
  const { fastify, db, copy, project } = await setUp(t, { CHANGES_MAX_WAITING: 50 })
  // The connections checked out of the pool from here on, and the command each one runs: all
  // that the waits take is seen (the shared stream's may have been taken before).
  const client = fastify.database.client()
  const out = new Set<string>()
  const running = new Map<string, string>()
  const key = (event: { address: string, connectionId?: number | string }): string => `${event.address}/${String(event.connectionId)}`
  client.on('connectionCheckedOut', (event) => { out.add(key(event)) })
  client.on('connectionCheckedIn', (event) => { out.delete(key(event)) })
  client.on('commandStarted', (event) => { running.set(key(event), event.commandName) })
  client.on('commandSucceeded', (event) => { running.delete(key(event)) })
  client.on('commandFailed', (event) => { running.delete(key(event)) })
  const waits = Array.from({ length: 50 }, async () => await fastify.inject(copy.url('wait=20')))
  // Each request reads once, then waits on the collection's shared stream: counted there once
  // its read is over, however long a busy machine takes. Its read's cursor is killed without
  // the request waiting for it: the pool is read once those killCursors are done.
  const hub = fastify.changes.hub('registrations', true)
  let idle: string[] = []
  let commands: string[] = []
  t.ok(await until(() => {
    if (hub.waiting !== 50) return false
    idle = [...out].filter((connection) => !running.has(connection))
    commands = [...out].flatMap((connection) => running.get(connection) ?? [])
    return !commands.includes('killCursors')
  }, 15_000, 50), 'all 50 wait on the shared stream, their own reads closed')
  // A waiting request holding a connection would hold it idle, or run a getMore of a stream of
  // its own; the shared stream's getMore and a readiness ping come and go.
  t.same(idle, [], 'no connection is checked out without a command running on it')
  t.ok(commands.every((name) => name === 'getMore' || name === 'ping'), `commands running while 50 requests wait: ${commands.join(', ') || 'none'}`)
  t.ok(commands.filter((name) => name === 'getMore').length <= 1, 'at most one getMore: the shared stream\'s')
  const refused = await fastify.inject(copy.url('wait=3'))
  t.equal(refused.statusCode, 503)
  t.match(JSON.parse(refused.body), { code: 'OVERLOADED' })
  t.ok(Number(refused.headers['retry-after']) >= 1, 'with Retry-After')
  t.equal((await fastify.inject(copy.url())).statusCode, 200, 'a feed request that does not wait is served')
  const list = await fastify.inject(`/projects/${String(project)}/registrations`)
  t.equal(list.statusCode, 200, 'lists are served beside them')
  // A change of the project ends every wait.
  await db.collection('registrations').insertOne({ project, role: 'volunteer' })
  const answers = await Promise.all(waits)
  t.ok(answers.every((res) => res.statusCode === 200), 'every waiting request is answered')
  t.ok(answers.every((res) => res.json().events.length === 1), 'with the change')
  t.equal((await fastify.inject(copy.url('wait=1'))).statusCode, 200, 'places are given back')
})

t.test('shutdown ends waiting requests at once, with what they have', feeds, async (t) => {
  const fastify = await build(t, { config: { CURSOR_SECRET: 'a-waiting-test-secret-of-32-bytes-long' } })
  const { path } = await feedProject(fastify.mongo.db as Db, 'registrations')
  const copy = new FeedCopy(path)
  await copy.catchUp(async (url) => await fastify.inject(url))
  const sent = Date.now()
  const answering = fastify.inject(copy.url(`wait=${FEED_MAX_WAIT}`))
  t.ok(await until(() => fastify.changes.hub('registrations', true).waiting === 1, 15_000), 'the request waits')
  fastify.lifecycle.stopAccepting()
  const res = await answering
  t.equal(res.statusCode, 200)
  t.same((JSON.parse(res.body) as FeedAnswer).events, [])
  // That the stop ends a wait with the clock unmoved is test/changes/waiters.test.ts's.
  t.ok(Date.now() < sent + FEED_MAX_WAIT * 1000, 'ended by the stop, before the wait\'s deadline')
})

async function listen (t: Test, fastify: Awaited<ReturnType<typeof build>>): Promise<string> {
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  const address = fastify.server.address() as net.AddressInfo
  return `http://127.0.0.1:${address.port}`
}

t.test('a stream carries events and checkpoints, uncompressed, and ends with a checkpoint', feeds, async (t) => {
  const { fastify, db, project, path } = await setUp(t)
  await db.collection('registrations').insertMany([{ project, role: 'a' }, { project, role: 'b' }])
  const base = await listen(t, fastify)
  const lines: Array<Record<string, unknown>> = []
  const response = await new Promise<http.IncomingMessage>((resolve) => http.get(`${base}${path}?limit=1`, { headers: { accept: 'application/x-ndjson', 'accept-encoding': 'gzip, br' } }, resolve))
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^application\/x-ndjson/)
  t.equal(response.headers['x-accel-buffering'], 'no')
  t.equal(response.headers['content-encoding'], undefined, 'never compressed')
  let text = ''
  response.setEncoding('utf8')
  response.on('data', (chunk: string) => {
    text += chunk
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n')) {
      lines.push(JSON.parse(text.slice(0, end)) as Record<string, unknown>)
      text = text.slice(end + 1)
    }
  })
  let ended = false
  response.once('end', () => { ended = true })
  // The listing sent, the stream waits for changes: the next one is a change, not part of the listing.
  t.ok(await until(() => lines.filter((line) => 'type' in line).length === 2 && fastify.changes.hub('registrations', true).waiting === 1, 15_000), 'listed, then waiting')
  const { insertedId } = await db.collection('registrations').insertOne({ project, role: 'c' })
  const changeLine = (): number => lines.findIndex((line) => line._id === insertedId.toHexString())
  t.ok(await until(() => changeLine() >= 0 && lines.slice(changeLine() + 1).some((line) => 'next' in line), 15_000), 'the change, then a checkpoint')
  // Its end by the clock (CHANGES_STREAM_SECONDS) is test/changes/feed-stream.test.ts's: this one ends it by the stop.
  t.notOk(ended, 'the stream stays open after the change')
  fastify.lifecycle.stopAccepting()
  t.ok(await until(() => ended, 15_000), 'and ends when the service stops')
  const events = lines.filter((line) => 'type' in line)
  t.equal(events.length, 3, 'the listing (two) and the change (one)')
  t.equal(events[2]?._id, insertedId.toHexString())
  t.ok(lines.every((line) => 'type' in line || ('next' in line && 'synced' in line)), 'each line an event or a checkpoint')
  t.ok('next' in (lines.at(-1) as object), 'it ends with a checkpoint')
  const checkpoints = lines.filter((line) => 'next' in line)
  t.equal(checkpoints[0]?.synced, false, 'not synced while listing')
  t.equal(checkpoints.at(-1)?.synced, true)
})

t.test('Accept chooses the stream as RFC 9110 weighs it: NDJSON named or preferred, and acceptable', feeds, async (t) => {
  const { fastify, path } = await setUp(t)
  const base = await listen(t, fastify)
  const stream = /^application\/x-ndjson/
  const json = /^application\/json/
  const cases: Array<[string | undefined, RegExp]> = [
    ['application/x-ndjson', stream],
    ['APPLICATION/X-NDJSON', stream],
    ['application/x-ndjson; charset=utf-8', stream],
    ['application/json;q=0.5, application/x-ndjson', stream],
    ['application/x-ndjson, */*', stream],
    ['application/x-ndjson;q=0.5, */*, application/json;q=0.4', stream],
    ['application/x-ndjson;q=0, application/json', json],
    ['application/json, application/x-ndjson;q=0', json],
    ['application/x-ndjson, application/json', stream],
    ['application/json, application/x-ndjson;q=0.9', json],
    ['application/x-ndjson;q=0.5, application/*', json],
    ['*/*', json],
    [undefined, json]
  ]
  for (const [accept, type] of cases) {
    const response = await new Promise<http.IncomingMessage>((resolve) => http.get(`${base}${path}`, { headers: accept === undefined ? {} : { accept } }, resolve))
    // The headers say which answer it is; a stream would stay open for minutes.
    response.destroy()
    t.equal(response.statusCode, 200, `Accept: ${accept ?? '(none)'}`)
    t.match(response.headers['content-type'], type, `Accept: ${accept ?? '(none)'}: ${type === stream ? 'a stream' : 'JSON'}`)
  }
})

t.test('a stream ends with a checkpoint when the service stops', feeds, async (t) => {
  const { fastify, path } = await setUp(t)
  const base = await listen(t, fastify)
  const response = await new Promise<http.IncomingMessage>((resolve) => http.get(`${base}${path}`, { headers: { accept: 'application/x-ndjson' } }, resolve))
  let text = ''
  response.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
  let ended = false
  response.once('end', () => { ended = true })
  t.ok(await until(() => fastify.changes.hub('registrations', true).waiting === 1, 15_000), 'the stream waits for changes')
  fastify.lifecycle.stopAccepting()
  // Its own end, CHANGES_STREAM_SECONDS, is minutes away; that the stop needs no tick of the clock is test/changes/feed-stream.test.ts's.
  t.ok(await until(() => ended, 15_000), 'the stop ended it')
  const lines = text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  t.ok('next' in (lines.at(-1) as object), 'the last line is a checkpoint')
})

/**
 * A stream at `url` whose reader reads its head and then nothing, while 1,000 documents of 20 KB
 * (far more than the socket's buffers hold) are written; `served` is the service's side of it.
 */
async function pausedStream (t: Test, fastify: FastifyInstance, base: URL, url: string, db: Db, project: ObjectId) {
  let response: http.ServerResponse | undefined
  fastify.server.on('request', (_request: http.IncomingMessage, served: http.ServerResponse) => { response = served })
  const socket = net.connect(Number(base.port), '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  await once(socket, 'connect')
  socket.write(`GET ${url} HTTP/1.1\r\nHost: x\r\nAccept: application/x-ndjson\r\n\r\n`)
  socket.pause()
  const big = 'x'.repeat(20_000)
  for (let i = 0; i < 10; i++) await db.collection('registrations').insertMany(Array.from({ length: 100 }, () => ({ project, role: big })))
  return { socket, served: () => response }
}

t.test('a reader that falls limit × 10 events behind is ended with a problem line', feeds, async (t) => {
  const { fastify, db, project, copy } = await setUp(t)
  const base = new URL(await listen(t, fastify))
  // The service's side of the answer, to see when it has ended it (on a busy machine the events
  // reach the stream slowly, and a reader that resumed early would never be behind).
  const { socket, served } = await pausedStream(t, fastify, base, copy.url('limit=1'), db, project)
  t.ok(await until(() => served()?.writableEnded === true, 30_000, 100), 'the service ended the answer of the reader that did not read')
  socket.resume()
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => { text += chunk })
  // The answer ends with its last chunk; the connection itself stays open (keep-alive).
  await until(() => text.includes('\r\n0\r\n\r\n'), 20_000, 100)
  socket.destroy()
  const body = text.slice(text.indexOf('\r\n\r\n') + 4)
  const last = body.trim().split('\n').filter((line) => line.startsWith('{')).at(-1) ?? ''
  t.match(JSON.parse(last), { problem: { status: 503, code: 'OVERLOADED' } }, 'the last line is the problem')
})

t.test('large events end a stream that holds 16 MiB for its reader, whose connection goes once SEND_TIMEOUT_MS has passed unread', feeds, async (t) => {
  const { fastify, db, project, copy } = await setUp(t, { SEND_TIMEOUT_MS: 1000 })
  const base = new URL(await listen(t, fastify))
  // limit=1000: 10,000 events behind would be 200 MB of these; 1,000 of them are 20 MB.
  const { served } = await pausedStream(t, fastify, base, copy.url('limit=1000'), db, project)
  t.ok(await until(() => served()?.writableEnded === true, 30_000, 100), 'ended by what it holds, far from 10,000 events behind')
  t.ok(await until(() => served()?.closed === true, 15_000, 100), 'and, never read, its connection is closed: the service holds none of it')
})
