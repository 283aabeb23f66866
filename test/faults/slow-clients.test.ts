// Slow clients, as a pod reached directly (no proxy in front) meets them: a thousand that send
// their request head a byte at a time (slowloris), clients that never read a 1,000-document
// page, idle kept-alive connections and connections that send nothing. Each is disconnected
// after its documented time, and meanwhile other callers get their pages as usual.
import net from 'node:net'
import { ObjectId } from 'mongodb'
import t from 'tap'
import { build } from '../helpers/build.js'
import { until } from '../helpers/until.js'

t.setTimeout(120_000)
/** Short limits keep the suite fast; the rules are the same at any value. */
const LIMIT_MS = 1500
/** Node checks head and request times every second; the service its unread answers four times a second. */
const CHECK_MS = 1000
/** Scheduling noise: other processes may hold the CPU when a limit falls due. */
const SLACK_MS = 1500

/** When the last 1,000-document page was handed to Node to write. */
let lastWritten = 0
/** Every answer to a 1,000-document request, page ('200') or not, so that a failure names what each got. */
const bigAnswers: string[] = []
const fastify = await build(t, {
  config: {
    HEADERS_TIMEOUT_MS: LIMIT_MS,
    REQUEST_TIMEOUT_MS: LIMIT_MS,
    KEEP_ALIVE_TIMEOUT_MS: LIMIT_MS,
    SEND_TIMEOUT_MS: LIMIT_MS,
    // Ten 10 MB pages are read, decoded and written on this one thread, beside the in-process
    // stand-in and other test files: the last may take longer than the 5 s default to read, and
    // a 503 QUERY_TIMEOUT is a page never written. test/faults/request-budget.test.ts tests the budget.
    QUERY_TIMEOUT_MS: 60_000
  },
  extend: (app) => app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.includes('limit=1000')) return payload
    if (reply.statusCode === 200) {
      lastWritten = Date.now()
      bigAnswers.push('200')
    } else {
      bigAnswers.push(`${reply.statusCode} ${/"code":"(\w+)"/.exec(String(payload))?.[1] ?? ''}`)
    }
    return payload
  })
})
const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
// 1,000 projects of about 10 KB: a 10 MB page, more than the kernel's socket buffers take.
await db.collection('projects').insertMany(Array.from({ length: 1000 }, (_, i) =>
  ({ _id: new ObjectId(), name: `${i} ${'x'.repeat(10_000)}` })))
const address = await fastify.listen({ port: 0, host: '127.0.0.1' })
const { port } = fastify.server.address() as net.AddressInfo

/** A page from a well-behaved caller, timed, with when it was answered. */
async function page (): Promise<{ status: number, ms: number, at: number }> {
  const started = Date.now()
  const res = await fetch(`${address}/projects?limit=5&fields=_id`)
  await res.arrayBuffer()
  const at = Date.now()
  return { status: res.status, ms: at - started, at }
}

/**
 * Pages asked one after another while `busy` holds (at most
 * 1,000, for at most `withinMs`): their statuses, when each was answered, and the slowest.
 */
async function pagesWhile (
  busy: (asked: number) => boolean,
  withinMs: number
): Promise<{ statuses: number[], answeredAt: number[], slowest: number, median: number }> {
  const outcomes: Array<{ status: number, ms: number, at: number }> = []
  await until(async () => {
    if (!busy(outcomes.length) || outcomes.length >= 1000) return true
    outcomes.push(await page())
    return false
  }, withinMs)
  const ms = outcomes.map((o) => o.ms).sort((a, b) => a - b)
  return {
    statuses: outcomes.map((o) => o.status),
    answeredAt: outcomes.map((o) => o.at),
    slowest: ms.at(-1) ?? 0,
    median: ms[Math.floor(ms.length / 2)] ?? 0
  }
}

/** When a connection was closed, or Infinity when it was still open after `ms`. */
async function closedWithin (closed: Promise<number>, ms: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined
  const open = new Promise<number>((resolve) => { timer = setTimeout(() => { resolve(Infinity) }, ms) })
  try {
    return await Promise.race([closed, open])
  } finally {
    clearTimeout(timer)
  }
}

/** A connection to the service, with the time it was closed by the other side (or Infinity). */
async function connect (): Promise<{ socket: net.Socket, closed: Promise<number>, received: () => string }> {
  const socket = net.connect(port, '127.0.0.1')
  let received = ''
  socket.on('data', (chunk: Buffer) => { received += chunk.toString('latin1') })
  socket.on('error', () => {})
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())))
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  return { socket, closed, received: () => received }
}

t.test('a thousand slowloris connections are disconnected after HEADERS_TIMEOUT_MS, ' +
  'and others are served meanwhile', async (t) => {
  const baseline = await pagesWhile((asked) => asked < 20, 5000)
  const clients: Array<Awaited<ReturnType<typeof connect>>> = []
  for (let batch = 0; batch < 10; batch++) {
    clients.push(...await Promise.all(Array.from({ length: 100 }, connect)))
  }
  const started = Date.now()
  for (const { socket } of clients) socket.write('GET /projects HTTP/1.1\r\nHost: listing\r\nX-Slow: ')
  // A byte every 200 ms from each, for as long as its connection lives (at most 50 bytes).
  let sent = 0
  const drip = setInterval(() => {
    sent++
    for (const { socket } of clients) if (!socket.destroyed) socket.write('a')
    if (sent >= 50) clearInterval(drip)
  }, 200)
  t.teardown(() => { clearInterval(drip); for (const { socket } of clients) socket.destroy() })
  let open = clients.length
  for (const client of clients) client.closed.then(() => { open-- }, () => {})
  const bound = LIMIT_MS + CHECK_MS + 2 * SLACK_MS
  const during = await pagesWhile(() => open > 0, bound - (Date.now() - started))
  const closedAt = await Promise.all(clients.map(async (client) =>
    await closedWithin(client.closed, bound - (Date.now() - started))))
  clearInterval(drip)
  const latest = Math.max(...closedAt) - started
  t.ok(latest <= LIMIT_MS + CHECK_MS + SLACK_MS,
    `all 1000 disconnected, the last ${latest} ms after its first byte (HEADERS_TIMEOUT_MS ${LIMIT_MS})`)
  t.ok(clients.every((client) => client.received().startsWith('HTTP/1.1 408 ')), 'each told 408 first')
  // Served meanwhile, not once they are gone: pages answered while all thousand were still open.
  const firstDropped = Math.min(...closedAt)
  const meanwhile = during.answeredAt.filter((at) => at < firstDropped).length
  t.ok(meanwhile >= 1, `${meanwhile} of ${during.statuses.length} pages answered before the first ` +
    `slowloris connection was dropped, ${firstDropped - started} ms after its first byte`)
  t.ok(during.statuses.every((status) => status === 200), 'all 200')
  t.ok(during.slowest <= baseline.slowest + SLACK_MS, `pages meanwhile: median ${during.median} ms, ` +
    `slowest ${during.slowest} ms, within scheduling noise (${SLACK_MS} ms) of the slowest alone ` +
    `(alone: median ${baseline.median} ms, slowest ${baseline.slowest} ms)`)
})

t.test('clients that never read a 1,000-document page are disconnected after SEND_TIMEOUT_MS, ' +
  'and the answers dropped', async (t) => {
  const readers = await Promise.all(Array.from({ length: 10 }, connect))
  t.teardown(() => { for (const { socket } of readers) socket.destroy() })
  for (const { socket } of readers) {
    socket.pause()
    socket.write('GET /projects?limit=1000 HTTP/1.1\r\nHost: listing\r\n\r\n')
  }
  const started = Date.now()
  // Each of the ten is answered, then waits for its client. Not all ten at once: on a busy machine
  // the first may be dropped (SEND_TIMEOUT_MS after its writing) before the last is written.
  await until(() => bigAnswers.length >= 10, 30_000)
  const written = bigAnswers.filter((answer) => answer === '200').length
  t.equal(written, 10, 'ten answers written to clients that read none of them' +
    (written === 10 ? '' : `; the ten got: ${bigAnswers.join(' | ') || 'nothing'}`))
  // Until every answer is dropped, or the last written has outlived its bound (a busy machine
  // may take seconds to write ten 10 MB pages: the bound runs from each one's writing).
  const during = await pagesWhile(() => fastify.lifecycle.inFlight > 0 &&
    (lastWritten === 0 || Date.now() - lastWritten <= LIMIT_MS + CHECK_MS + SLACK_MS), 60_000 - (Date.now() - started))
  const gone = Date.now()
  t.equal(fastify.lifecycle.inFlight, 0, `no answer left waiting, ${gone - started} ms after they were asked for`)
  t.ok(gone - lastWritten <= LIMIT_MS + CHECK_MS + SLACK_MS,
    `${gone - lastWritten} ms after the last was written: within SEND_TIMEOUT_MS (${LIMIT_MS}) and the sweep`)
  const connections = await new Promise<number>((resolve, reject) =>
    fastify.server.getConnections((error, count) => error === null ? resolve(count) : reject(error)))
  t.ok(connections <= 1, `their connections are closed (${connections} open: the fetch client's own)`)
  t.ok(during.statuses.every((status) => status === 200),
    `${during.statuses.length} pages meanwhile, all 200, slowest ${during.slowest} ms`)
})

t.test('an idle kept-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS; ' +
  'one that sends nothing after HEADERS_TIMEOUT_MS', async (t) => {
  const idle = await connect()
  const silent = await connect()
  t.teardown(() => { idle.socket.destroy(); silent.socket.destroy() })
  const started = Date.now()
  idle.socket.write('GET /health HTTP/1.1\r\nHost: listing\r\n\r\n')
  const [idleClosed, silentClosed] = await Promise.all([idle.closed, silent.closed].map(async (closed) =>
    await closedWithin(closed, LIMIT_MS + 1000 + CHECK_MS + 2 * SLACK_MS)))
  t.match(idle.received(), /^HTTP\/1\.1 200 /, 'the kept-alive connection was answered')
  // Node closes an idle kept-alive socket after keepAliveTimeout plus a second it allows for the client's own timer.
  t.ok(idleClosed - started <= LIMIT_MS + 1000 + SLACK_MS,
    `idle kept-alive connection closed after ${idleClosed - started} ms (KEEP_ALIVE_TIMEOUT_MS ${LIMIT_MS})`)
  t.ok(silentClosed - started <= LIMIT_MS + CHECK_MS + SLACK_MS,
    `a connection that sent nothing closed after ${silentClosed - started} ms`)
})

t.test('the defaults are documented time limits, and a head may not have longer than its request', async (t) => {
  const { readConfig } = await import('../../plugins/config.js')
  const config = readConfig({})
  t.same([config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS, config.KEEP_ALIVE_TIMEOUT_MS, config.SEND_TIMEOUT_MS],
    [10_000, 10_000, 72_000, 10_000])
  t.throws(() => readConfig({ HEADERS_TIMEOUT_MS: '20000' }),
    /HEADERS_TIMEOUT_MS \(20000\) must not exceed REQUEST_TIMEOUT_MS \(10000\)/)
})
