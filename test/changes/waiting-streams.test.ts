// Streaming feeds (docs/changes.md): a stream carries event lines and checkpoints, is never
// compressed, ends with a checkpoint, and ends a reader that falls too far behind with a problem
// line; Accept chooses it as RFC 9110 weighs it. Waiting requests are test/changes/waiting.test.ts's.
import http from 'node:http'
import net from 'node:net'
import { once } from 'node:events'
import type { FastifyInstance } from 'fastify'
import type { Db, ObjectId } from 'mongodb'
import t, { type Test } from 'tap'
import type { build } from '../helpers/build.js'
import { requireChangeStreams } from '../helpers/feeds.js'
import { until } from '../helpers/until.js'
import { setUp } from './waiting-setup.js'

const feeds = await requireChangeStreams(t)

t.setTimeout(120_000)

async function listen (t: Test, fastify: Awaited<ReturnType<typeof build>>): Promise<string> {
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  const address = fastify.server.address() as net.AddressInfo
  return `http://127.0.0.1:${address.port}`
}

/** The head of the answer to a GET of `url` with `headers`. */
const request = async (url: string, headers: http.OutgoingHttpHeaders) =>
  await new Promise<http.IncomingMessage>((resolve) => http.get(url, { headers }, resolve))

t.test('a stream carries events and checkpoints, uncompressed, and ends with a checkpoint', feeds, async (t) => {
  const { fastify, db, project, path } = await setUp(t)
  await db.collection('registrations').insertMany([{ project, role: 'a' }, { project, role: 'b' }])
  const base = await listen(t, fastify)
  const lines: Array<Record<string, unknown>> = []
  const response = await request(`${base}${path}?limit=1`,
    { accept: 'application/x-ndjson', 'accept-encoding': 'gzip, br' })
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
  t.ok(await until(() => lines.filter((line) => 'type' in line).length === 2 &&
    fastify.changes.hub('registrations', true).waiting === 1, 15_000), 'listed, then waiting')
  const { insertedId } = await db.collection('registrations').insertOne({ project, role: 'c' })
  const changeLine = (): number => lines.findIndex((line) => line._id === insertedId.toHexString())
  t.ok(await until(() => changeLine() >= 0 && lines.slice(changeLine() + 1).some((line) => 'next' in line), 15_000),
    'the change, then a checkpoint')
  // Its end by the clock (CHANGES_STREAM_SECONDS) is test/changes/feed-stream.test.ts's: this one ends it by the stop.
  t.notOk(ended, 'the stream stays open after the change')
  fastify.lifecycle.stopAccepting()
  t.ok(await until(() => ended, 15_000), 'and ends when the service stops')
  const events = lines.filter((line) => 'type' in line)
  t.equal(events.length, 3, 'the listing (two) and the change (one)')
  t.equal(events[2]?._id, insertedId.toHexString())
  t.ok(lines.every((line) => 'type' in line || ('next' in line && 'synced' in line)),
    'each line an event or a checkpoint')
  t.ok('next' in (lines.at(-1) as object), 'it ends with a checkpoint')
  const checkpoints = lines.filter((line) => 'next' in line)
  t.equal(checkpoints[0]?.synced, false, 'not synced while listing')
  t.equal(checkpoints.at(-1)?.synced, true)
})

t.test('Accept chooses the stream as RFC 9110 weighs it: ' +
  'NDJSON named or preferred, and acceptable', feeds, async (t) => {
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
    const response = await request(`${base}${path}`, accept === undefined ? {} : { accept })
    // The headers say which answer it is; a stream would stay open for minutes.
    response.destroy()
    t.equal(response.statusCode, 200, `Accept: ${accept ?? '(none)'}`)
    t.match(response.headers['content-type'], type,
      `Accept: ${accept ?? '(none)'}: ${type === stream ? 'a stream' : 'JSON'}`)
  }
})

t.test('a stream ends with a checkpoint when the service stops', feeds, async (t) => {
  const { fastify, path } = await setUp(t)
  const base = await listen(t, fastify)
  const response = await request(`${base}${path}`, { accept: 'application/x-ndjson' })
  let text = ''
  response.setEncoding('utf8').on('data', (chunk: string) => { text += chunk })
  let ended = false
  response.once('end', () => { ended = true })
  t.ok(await until(() => fastify.changes.hub('registrations', true).waiting === 1, 15_000),
    'the stream waits for changes')
  fastify.lifecycle.stopAccepting()
  // Its own end, CHANGES_STREAM_SECONDS, is minutes away; that the stop needs no tick of the clock is
  // test/changes/feed-stream.test.ts's.
  t.ok(await until(() => ended, 15_000), 'the stop ended it')
  const lines = text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  t.ok('next' in (lines.at(-1) as object), 'the last line is a checkpoint')
})

/**
 * A stream at `url` whose reader reads its head and then nothing, while 1,000 documents of 20 KB
 * (far more than the socket's buffers hold) are written; `served` is the service's side of it.
 */
async function pausedStream (
  t: Test, fastify: FastifyInstance, base: URL, url: string, db: Db, project: ObjectId, batches = 10
) {
  let response: http.ServerResponse | undefined
  fastify.server.on('request', (_request: http.IncomingMessage, served: http.ServerResponse) => { response = served })
  const socket = net.connect(Number(base.port), '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  await once(socket, 'connect')
  socket.write(`GET ${url} HTTP/1.1\r\nHost: x\r\nAccept: application/x-ndjson\r\n\r\n`)
  socket.pause()
  const big = 'x'.repeat(20_000)
  for (let i = 0; i < batches; i++) {
    await db.collection('registrations').insertMany(Array.from({ length: 100 }, () => ({ project, role: big })))
  }
  return { socket, served: () => response }
}

t.test('a reader that falls limit × 10 events behind is ended with a problem line', feeds, async (t) => {
  const { fastify, db, project, copy } = await setUp(t)
  const base = new URL(await listen(t, fastify))
  // The service's side of the answer, to see when it has ended it (on a busy machine the events
  // reach the stream slowly, and a reader that resumed early would never be behind).
  const { socket, served } = await pausedStream(t, fastify, base, copy.url('limit=1'), db, project)
  t.ok(await until(() => served()?.writableEnded === true, 30_000, 100),
    'the service ended the answer of the reader that did not read')
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

t.test('large events end a stream that holds 16 MiB for its reader, ' +
  'whose connection goes once SEND_TIMEOUT_MS has passed unread', feeds, async (t) => {
  const { fastify, db, project, copy } = await setUp(t, { SEND_TIMEOUT_MS: 1000 })
  const base = new URL(await listen(t, fastify))
  // limit=1000: 10,000 events behind would be 200 MB of these; 2,000 of them are 40 MB, of which
  // the sockets' buffers (the kernel's, both ends) take a few MB: more than 16 MiB stays held.
  const { served } = await pausedStream(t, fastify, base, copy.url('limit=1000'), db, project, 20)
  t.ok(await until(() => served()?.writableEnded === true, 30_000, 100),
    'ended by what it holds, far from 10,000 events behind')
  t.ok(await until(() => served()?.closed === true, 15_000, 100),
    'and, never read, its connection is closed: the service holds none of it')
})
