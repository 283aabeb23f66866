// Waiting and streaming feeds (docs/changes.md): a waiting request answers as soon as a change
// of its project is committed, takes no database connection while it waits, ends with what it
// has when the service stops; CHANGES_MAX_WAITING bounds waits and streams; a stream carries
// event lines and checkpoints, is never compressed, ends with a checkpoint, and ends a reader
// that falls too far behind with a problem line.
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { ObjectId, type Db } from 'mongodb'
import t, { type Test } from 'tap'
import type { Config } from '../../plugins/config.js'
import { build } from '../helpers/build.js'
import { FeedCopy, prepareFeeds, requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'
import { until } from '../helpers/until.js'

const feeds = await requireChangeStreams(t)

t.setTimeout(120_000)

async function setUp (t: Test, config: Partial<Config> = {}) {
  const fastify = await build(t, { config: { CURSOR_SECRET: 'a-waiting-test-secret-of-32-bytes-long', ...config } })
  const db = fastify.mongo.db as Db
  await prepareFeeds(db)
  const project = new ObjectId()
  await db.collection('projects').insertOne({ _id: project, name: 'P' })
  const path = `/projects/${String(project)}/registrations/changes`
  const copy = new FeedCopy(path)
  await copy.catchUp(async (url) => await fastify.inject(url))
  return { fastify, db, project, path, copy }
}

t.test('a waiting request answers as soon as a change of its project comes, not another\'s', feeds, async (t) => {
  const { fastify, db, project, copy } = await setUp(t)
  const hub = fastify.changes.hub('registrations', true)
  let answered = false
  const answering = fastify.inject(copy.url('wait=10')).finally(() => { answered = true })
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
  const written = Date.now()
  const { insertedId } = await db.collection('registrations').insertOne({ project, role: 'volunteer' })
  const res = await answering
  const answer = JSON.parse(res.body) as FeedAnswer
  t.same(answer.events.map((event) => event._id), [insertedId.toHexString()], 'its own project\'s change, and only that')
  t.ok(Date.now() - written < 1000, `answered ${Date.now() - written} ms after the commit (within a second)`)
})

t.test('a wait without changes ends after wait seconds, with no event and a token', feeds, async (t) => {
  const { fastify, copy } = await setUp(t)
  const started = Date.now()
  const res = await fastify.inject(copy.url('wait=1'))
  const elapsed = Date.now() - started
  const answer = JSON.parse(res.body) as FeedAnswer
  t.equal(res.statusCode, 200)
  t.same(answer.events, [])
  t.ok(answer.synced)
  t.ok(elapsed >= 950 && elapsed < 3000, `answered after ${elapsed} ms`)
})

t.test('CHANGES_MAX_WAITING bounds the requests that wait; waiting takes no connection from lists', feeds, async (t) => {
  const { fastify, db, copy, project } = await setUp(t, { CHANGES_MAX_WAITING: 50 })
  let checkedOut = 0
  fastify.mongo.client.on('connectionCheckedOut', () => { checkedOut++ })
  fastify.mongo.client.on('connectionCheckedIn', () => { checkedOut-- })
  const waits = Array.from({ length: 50 }, async () => await fastify.inject(copy.url('wait=20')))
  // Each request reads once, then waits on the collection's shared stream: counted there once
  // its read is over, however long a busy machine takes.
  const hub = fastify.changes.hub('registrations', true)
  t.ok(await until(() => hub.waiting === 50, 15_000, 50), 'all 50 wait on the shared stream')
  // The fewest in use over half a second: a ping or a getMore of the stream comes and goes, while a
  // connection held by a waiting request would stay.
  let baseline = checkedOut
  for (let i = 0; i < 10; i++) { await sleep(50); baseline = Math.min(baseline, checkedOut) }
  t.ok(baseline <= 2, `connections in use while 50 requests wait: ${baseline} (the shared stream's)`)
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
  await prepareFeeds(fastify.mongo.db as Db)
  const project = new ObjectId()
  await fastify.mongo.db?.collection('projects').insertOne({ _id: project })
  const copy = new FeedCopy(`/projects/${String(project)}/registrations/changes`)
  await copy.catchUp(async (url) => await fastify.inject(url))
  const answering = fastify.inject(copy.url('wait=30'))
  t.ok(await until(() => fastify.changes.hub('registrations', true).waiting === 1, 15_000), 'the request waits')
  const started = Date.now()
  fastify.lifecycle.stopAccepting()
  const res = await answering
  t.equal(res.statusCode, 200)
  t.same((JSON.parse(res.body) as FeedAnswer).events, [])
  t.ok(Date.now() - started < 1000, `answered ${Date.now() - started} ms after the stop`)
})

async function listen (t: Test, fastify: Awaited<ReturnType<typeof build>>): Promise<string> {
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  const address = fastify.server.address() as net.AddressInfo
  return `http://127.0.0.1:${address.port}`
}

t.test('a stream carries events and checkpoints, uncompressed, and ends with a checkpoint', feeds, async (t) => {
  const { fastify, db, project, path } = await setUp(t, { CHANGES_STREAM_SECONDS: 3 })
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
  // The listing sent, the stream waits for changes: the next one is a change, not part of the listing.
  t.ok(await until(() => lines.filter((line) => 'type' in line).length === 2 && fastify.changes.hub('registrations', true).waiting === 1, 15_000), 'listed, then waiting')
  const { insertedId } = await db.collection('registrations').insertOne({ project, role: 'c' })
  await once(response, 'end')
  const events = lines.filter((line) => 'type' in line)
  t.equal(events.length, 3, 'the listing (two) and the change (one)')
  t.equal(events[2]?._id, insertedId.toHexString())
  t.ok(lines.every((line) => 'type' in line || ('next' in line && 'synced' in line)), 'each line an event or a checkpoint')
  t.ok('next' in (lines.at(-1) as object), 'it ends with a checkpoint')
  const checkpoints = lines.filter((line) => 'next' in line)
  t.equal(checkpoints[0]?.synced, false, 'not synced while listing')
  t.equal(checkpoints.at(-1)?.synced, true)
})

t.test('a stream ends with a checkpoint when the service stops', feeds, async (t) => {
  const { fastify, path } = await setUp(t)
  const base = await listen(t, fastify)
  const response = await new Promise<http.IncomingMessage>((resolve) => http.get(`${base}${path}`, { headers: { accept: 'application/x-ndjson' } }, resolve))
  let text = ''
  response.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
  t.ok(await until(() => fastify.changes.hub('registrations', true).waiting === 1, 15_000), 'the stream waits for changes')
  const stopped = Date.now()
  fastify.lifecycle.stopAccepting()
  await once(response, 'end')
  t.ok(Date.now() - stopped < 1000, `ended ${Date.now() - stopped} ms after the stop`)
  const lines = text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  t.ok('next' in (lines.at(-1) as object), 'the last line is a checkpoint')
})

t.test('a reader that falls limit × 10 events behind is ended with a problem line', feeds, async (t) => {
  const { fastify, db, project, copy } = await setUp(t)
  const base = new URL(await listen(t, fastify))
  // The service's side of the answer, to see when it has ended it (on a busy machine the events
  // reach the stream slowly, and a reader that resumed early would never be behind).
  let served: http.ServerResponse | undefined
  fastify.server.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => { served = response })
  const socket = net.connect(Number(base.port), '127.0.0.1')
  await once(socket, 'connect')
  socket.write(`GET ${copy.url('limit=1')} HTTP/1.1\r\nHost: x\r\nAccept: application/x-ndjson\r\n\r\n`)
  socket.pause()
  // 1,000 documents of 20 KB: far more than the socket's buffers hold.
  const big = 'x'.repeat(20_000)
  for (let i = 0; i < 10; i++) await db.collection('registrations').insertMany(Array.from({ length: 100 }, () => ({ project, role: big })))
  t.ok(await until(() => served?.writableEnded === true, 30_000, 100), 'the service ended the answer of the reader that did not read')
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
