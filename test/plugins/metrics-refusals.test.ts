// docs/operations.md: what is refused before a route runs (by Fastify's router, Node's HTTP parser
// or the server's own events, answered by plugins/errors.ts) counts in the request metrics too:
// once, under the route `unmatched`, and in the rejected requests by its problem code.
import net from 'node:net'
import t from 'tap'
import { freePort } from '../faults/service-process.js'
import { build } from '../helpers/build.js'
import { until } from '../helpers/until.js'

/** A short head time limit, so that a 408 comes within the test's time. */
const LIMIT_MS = 1000
const port = await freePort()
const fastify = await build(t, {
  config: { METRICS_PORT: port, HEADERS_TIMEOUT_MS: LIMIT_MS, REQUEST_TIMEOUT_MS: LIMIT_MS }
})
const address = new URL(await fastify.listen({ port: 0, host: '127.0.0.1' }))

interface Counts {
  /** http_server_request_duration_seconds_count by `route method status_code`. */
  requests: Map<string, number>
  /** http_server_rejected_requests_total by code. */
  rejected: Map<string, number>
}

const total = (counts: Map<string, number>): number => [...counts.values()].reduce((sum, n) => sum + n, 0)

/** The two request metrics, read from /metrics (Prometheus text: `name{a="x",b="y"} value`). */
async function scrape (): Promise<Counts> {
  const text = await (await fetch(`${fastify.metricsAddress as string}/metrics`)).text()
  const counts: Counts = { requests: new Map(), rejected: new Map() }
  for (const line of text.split('\n')) {
    const match = /^(http_server_request_duration_seconds_count|http_server_rejected_requests_total)\{(.*)\} (\S+)$/
      .exec(line)
    if (match === null) continue
    const labels = Object.fromEntries([...(match[2] as string).matchAll(/([a-z_]+)="([^"]*)"/g)]
      .map((pair) => [pair[1], pair[2]]))
    if (match[1] === 'http_server_rejected_requests_total') {
      counts.rejected.set(labels.code as string, Number(match[3]))
    } else {
      counts.requests.set(`${labels.route as string} ${labels.method as string} ${labels.status_code as string}`,
        Number(match[3]))
    }
  }
  return counts
}

/**
 * Writes `request` to `to` without ending the socket (Node drops a half-closed client's answer
 * still being read): the answer, once the server closes the connection.
 */
async function raw (request: string, to: URL = address): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = net.connect(Number(to.port), to.hostname, () => socket.write(request))
    let answer = ''
    socket.setEncoding('utf8').on('data', (chunk: string) => { answer += chunk }).on('end', () => resolve(answer))
      .on('error', reject)
  })
}

const head = (line: string, headers = ''): string => `${line}\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`

/** The series and the rejection code of the marker request countsOnce sends. */
const MARKER = 'unmatched GET 404'
const MARKER_CODE = 'NOT_FOUND'

/**
 * The counts once `counted` holds (a count is taken when its answer is written: a scrape may
 * come a moment before), and once a request sent after that is counted too, so that a count
 * made twice, after the answer, would show; that request's own count taken out.
 */
async function countsOnce (counted: (counts: Counts) => boolean): Promise<Counts> {
  if (!await until(async () => counted(await scrape()), 2000, 20)) throw new Error('never counted')
  const marked = (await scrape()).requests.get(MARKER) ?? 0
  await raw(head('GET /a/marker HTTP/1.1'))
  let after = await scrape()
  if (!await until(async () => ((after = await scrape()).requests.get(MARKER) ?? 0) > marked, 2000, 20)) {
    throw new Error('the marker was never counted')
  }
  after.requests.set(MARKER, (after.requests.get(MARKER) ?? 0) - 1)
  after.rejected.set(MARKER_CODE, (after.rejected.get(MARKER_CODE) ?? 0) - 1)
  return after
}

// [what, request, status, method label, problem code]
const refusals: Array<[string, string, number, string, string]> = [
  ['a path segment over 100 characters (Fastify\'s FST_ERR_MAX_PARAM_LENGTH)',
    head(`GET /projects/${'a'.repeat(200)}/sessions HTTP/1.1`), 414, 'GET', 'URI_TOO_LONG'],
  ['a bad percent-escape in the path (Fastify\'s FST_ERR_BAD_URL)',
    head('GET /projects/%E0%A4%A/sessions HTTP/1.1'), 400, 'GET', 'BAD_REQUEST'],
  ['a 17 KB URL (Node\'s parser)', head(`GET /projects?x=${'a'.repeat(17 * 1024)} HTTP/1.1`),
    431, '_OTHER', 'HEADERS_TOO_LARGE'],
  ['a request that is not HTTP (Node\'s parser)', 'HELLO\r\n\r\n', 400, '_OTHER', 'BAD_REQUEST'],
  ['an expectation other than 100-continue (checkExpectation)', head('GET /projects HTTP/1.1', 'Expect: foo\r\n'),
    417, 'GET', 'BAD_REQUEST'],
  ['CONNECT (the server\'s connect event)', head('CONNECT /projects HTTP/1.1'), 405, 'CONNECT', 'METHOD_NOT_ALLOWED'],
  ['a head not whole within HEADERS_TIMEOUT_MS (Node\'s request timeout)', 'GET /projects HTTP/1.1\r\nHost: x\r\n',
    408, '_OTHER', 'BAD_REQUEST']
]

for (const [what, request, status, method, code] of refusals) {
  t.test(`${what}: ${status} ${code}, counted once as unmatched ${method}`, async (t) => {
    const before = await scrape()
    const answer = await raw(request)
    t.match(answer, new RegExp(`^HTTP/1\\.1 ${status} [\\s\\S]*"code":"${code}"`), 'the answer')
    const series = `unmatched ${method} ${status}`
    const added = (counts: Counts): number =>
      (counts.requests.get(series) ?? 0) - (before.requests.get(series) ?? 0)
    const after = await countsOnce((counts) => added(counts) > 0)
    t.equal(added(after), 1, `http_server_request_duration_seconds_count{route="unmatched",method="${method}",` +
      `status_code="${status}"} rose by one`)
    t.equal(total(after.requests) - total(before.requests), 1, 'and no other request series')
    t.equal((after.rejected.get(code) ?? 0) - (before.rejected.get(code) ?? 0), 1,
      `http_server_rejected_requests_total{code="${code}"} rose by one`)
    t.equal(total(after.rejected) - total(before.rejected), 1, 'and no other code')
  })
}

t.test('a refusal of an app without metrics answers as usual and counts nowhere else', async (t) => {
  const quiet = await build(t, { config: { METRICS_PORT: 0 } })
  const other = new URL(await quiet.listen({ port: 0, host: '127.0.0.1' }))
  const before = await scrape()
  t.match(await raw('HELLO\r\n\r\n', other), /^HTTP\/1\.1 400 [\s\S]*"code":"BAD_REQUEST"/)
  t.match(await raw(head(`GET /projects/${'a'.repeat(200)}/sessions HTTP/1.1`), other), /^HTTP\/1\.1 414 /)
  t.match(await raw(head('CONNECT /projects HTTP/1.1'), other), /^HTTP\/1\.1 405 /)
  // A request to this app after them: had theirs been counted here, they would show by its count.
  await raw(head('GET /no/such/path HTTP/1.1'))
  const after = await countsOnce((counts) => total(counts.requests) > total(before.requests))
  t.equal(total(after.requests) - total(before.requests), 1, 'only this app\'s own request')
  t.equal(after.requests.get('unmatched GET 404'), (before.requests.get('unmatched GET 404') ?? 0) + 1)
})

t.test('a routed refusal still counts once, through the onResponse hook', async (t) => {
  const before = await scrape()
  t.match(await raw(head('GET /projects/not-an-id/sessions HTTP/1.1')), /^HTTP\/1\.1 400 /)
  const after = await countsOnce((counts) => total(counts.requests) > total(before.requests))
  t.equal(total(after.requests) - total(before.requests), 1)
  t.equal(total(after.rejected) - total(before.rejected), 1)
  t.equal((after.requests.get('/projects/:projectId/sessions GET 400') ?? 0) -
    (before.requests.get('/projects/:projectId/sessions GET 400') ?? 0), 1)
})
