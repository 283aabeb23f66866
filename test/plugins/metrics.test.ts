// docs/operations.md: Prometheus metrics on a listener of their own, with route templates as labels.
import t from 'tap'
import { freePort } from '../faults/service-process.js'
import { buildWithDemoData, projectIds } from '../helpers/demo-app.js'
import { requireChangeStreams } from '../helpers/feeds.js'
import { until } from '../helpers/until.js'

interface Sample { name: string, labels: Record<string, string>, value: number }

/** The Prometheus text format, read line by line: `name{a="x",b="y"} value`. */
function parse (text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) continue
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = pair[2] as string
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) })
  }
  return samples
}

/** A request whose body is read to the end, so that no connection is left half-used when the app closes. */
async function get (url: string): Promise<{ status: number, type: string | null, text: string }> {
  const res = await fetch(url)
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
}

const port = await freePort()
const fastify = await buildWithDemoData(t, { config: { METRICS_PORT: port } })
const { publicIds } = await projectIds(fastify)
const address = await fastify.listen({ port: 0, host: '127.0.0.1' })
const feeds = await requireChangeStreams(t)

t.test('known requests show up as series with route templates, never raw URLs', async (t) => {
  t.equal(fastify.metricsAddress, `http://127.0.0.1:${port}`)
  for (let i = 0; i < 3; i++) await get(`${address}/projects/${publicIds[0] as string}/sessions?limit=2`)
  await get(`${address}/projects/${publicIds[1] as string}/sessions?limit=2`)
  await get(`${address}/projects/${publicIds[0] as string}/sessions?sort=bad`)
  await get(`${address}/no/such/${'x'.repeat(20)}`)
  const res = await get(`${fastify.metricsAddress as string}/metrics`)
  t.equal(res.status, 200)
  t.match(res.type, /^text\/plain/)
  const samples = parse(res.text)
  const count = (labels: Record<string, string>) => samples.find((s) =>
    s.name === 'http_server_request_duration_seconds_count' &&
    Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
  t.equal(count({ route: '/projects/:projectId/sessions', method: 'GET', status_code: '200' }), 4,
    'four lists, two projects, one template')
  t.equal(count({ route: '/projects/:projectId/sessions', status_code: '400' }), 1)
  t.equal(count({ route: 'unmatched', status_code: '404' }), 1, 'an unknown URL gets one shared label')
  t.notOk(samples.some((s) => (s.labels.route ?? '').includes(publicIds[0] as string)), 'no raw URL in a label')
  t.equal(samples.find((s) => s.name === 'http_server_rejected_requests_total' &&
    s.labels.code === 'INVALID_SORT')?.value, 1)
  const pages = samples.filter((s) => s.name === 'mongodb_command_duration_seconds_count' &&
    (s.labels.command === 'find' || s.labels.command === 'aggregate') && s.labels.outcome === 'success')
  t.ok(pages.reduce((sum, s) => sum + s.value, 0) >= 4,
    'MongoDB commands by name and outcome (a page is a find, or an aggregate for a project not remembered)')
  t.ok(samples.some((s) => s.name === 'mongodb_command_duration_seconds_count' && s.labels.command === 'ping' &&
    s.value >= 1), 'the watchdog\'s pings')
  t.ok(samples.some((s) => s.name === 'mongodb_pool_checkout_duration_seconds_count' && s.value > 0),
    'pool checkout wait')
  t.ok((samples.find((s) => s.name === 'mongodb_pool_connections')?.value ?? 0) >= 1, 'pool size')
  for (const name of ['nodejs_eventloop_lag_p99_seconds', 'process_cpu_seconds_total', 'mongodb_client_replacements']) {
    t.ok(samples.some((s) => s.name === name), name)
  }
})

t.test('off-schema values and authentication failures are counted', async (t) => {
  const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
  const { ObjectId } = await import('mongodb')
  await db.collection('activities').insertOne({
    project: new ObjectId(publicIds[0] as string), name: 'odd', tags: 'not-an-array'
  })
  await get(`${address}/projects/${publicIds[0] as string}/activities?limit=1000`)
  fastify.authFailures.set('expired', 2)
  const samples = parse((await get(`${fastify.metricsAddress as string}/metrics`)).text)
  t.equal(samples.find((s) => s.name === 'offschema_values_total' && s.labels.field === 'activities.tags')?.value, 1)
  t.equal(samples.find((s) => s.name === 'auth_failures_total' && s.labels.reason === 'expired')?.value, 2)
  t.ok((samples.find((s) => s.name === 'documents_kept_lookups_total' &&
    s.labels.outcome === 'written')?.value ?? 0) > 0, 'documents looked for among those kept')
  t.ok(samples.some((s) => s.name === 'documents_kept_bytes'), 'and the memory they hold')
})

t.test('change feeds: events sent by collection, waits and streams open, and the delivery lag', feeds, async (t) => {
  const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
  const { ObjectId } = await import('mongodb')
  const project = publicIds[0] as string
  const feed = `${address}/projects/${project}/places/changes?limit=1000`
  let answer = await (await fetch(feed)).json() as { next: string, synced: boolean, events: unknown[] }
  while (!answer.synced || answer.events.length > 0) {
    answer = await (await fetch(`${feed}&since=${answer.next}`)).json() as typeof answer
  }
  const waiting = fetch(`${feed}&since=${answer.next}&wait=5`)
  let samples: Sample[] = []
  const scrape = async (): Promise<Sample[]> =>
    (samples = parse((await get(`${fastify.metricsAddress as string}/metrics`)).text))
  t.ok(await until(async () => (await scrape()).find((s) => s.name === 'changes_requests_waiting')?.value === 1,
    4000, 50), 'one request waits')
  t.ok(await until(async () => (await scrape()).find((s) => s.name === 'changes_requests_idle')?.value === 1,
    4000, 50), 'asleep once its first read found nothing')
  t.equal(samples.find((s) => s.name === 'changes_streams_open')?.value, 0)
  const sentBefore = samples.find((s) => s.name === 'changes_events_sent_total' &&
    s.labels.collection === 'places')?.value ?? 0
  await db.collection('places').insertOne({ project: new ObjectId(project), name: 'new place' })
  await (await waiting).text()
  samples = parse((await get(`${fastify.metricsAddress as string}/metrics`)).text)
  t.equal(samples.find((s) => s.name === 'changes_requests_waiting')?.value, 0)
  t.equal(samples.find((s) => s.name === 'changes_requests_idle')?.value, 0, 'woken, nothing sleeps')
  t.equal((samples.find((s) => s.name === 'changes_events_sent_total' &&
    s.labels.collection === 'places')?.value ?? 0) - sentBefore, 1, 'the change was counted')
  t.equal(samples.find((s) => s.name === 'changes_delivery_lag_seconds_count')?.value, 1, 'its lag observed')
})

t.test('a command that fails is counted with outcome failure, and its error still reaches the caller', async (t) => {
  await t.rejects(fastify.database.timed('distinct', async () => { throw new Error('refused') }), /refused/)
  const samples = parse((await get(`${fastify.metricsAddress as string}/metrics`)).text)
  t.equal(samples.find((s) => s.name === 'mongodb_command_duration_seconds_count' && s.labels.command === 'distinct' &&
    s.labels.outcome === 'failure')?.value, 1)
})

t.test('the method label takes the known methods as they are and any other as _OTHER, ' +
  'so every method Node accepts adds one series at most', async (t) => {
  const { METHODS, request } = await import('node:http')
  const send = async (method: string, path: string) => await new Promise<void>((resolve, reject) => {
    request(`${address}${path}`, { method }, (res) => { res.resume().on('end', resolve) }).on('error', reject).end()
  })
  const urls = [`/projects/${publicIds[0] as string}/teams`, '/projects', '/no/such/path']
  // CONNECT never reaches a route: plugins/errors.ts answers it on the socket (metrics-refusals.test.ts counts it).
  const sent = METHODS.filter((m) => m !== 'CONNECT')
  for (const method of sent) for (const url of urls) await send(method, url)
  const samples = parse((await get(`${fastify.metricsAddress as string}/metrics`)).text)
    .filter((s) => s.name === 'http_server_request_duration_seconds_count')
  const methods = new Set(samples.map((s) => s.labels.method))
  t.same([...methods].filter((m) => ![
    'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', '_OTHER'
  ].includes(m as string)), [], 'no other label value')
  t.ok(methods.has('_OTHER'), `${sent.length} methods sent, the unknown ones counted as _OTHER`)
  const other = samples.filter((s) => s.labels.method === '_OTHER' && s.labels.route === '/projects/:projectId/teams')
    .reduce((sum, s) => sum + s.value, 0)
  t.equal(other, sent.filter((m) => ![
    'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'
  ].includes(m)).length, 'each unknown method counted once under _OTHER')
  for (const url of ['/projects/:projectId/teams', 'unmatched']) {
    const series = samples.filter((s) => s.labels.route === url)
    t.ok(series.length <= 10 * 3, `${url}: ${series.length} series (at most 10 method values by a few statuses)`)
  }
})

t.test('the metrics listener refuses other paths and methods with problem+json', async (t) => {
  const other = await get(`${String(fastify.metricsAddress)}/other`)
  t.match([other.status, other.type, JSON.parse(other.text)], [404, 'application/problem+json', { code: 'NOT_FOUND' }])
  const post = await fetch(`${String(fastify.metricsAddress)}/metrics`, { method: 'POST' })
  t.match([post.status, post.headers.get('allow'), await post.json()],
    [405, 'GET, HEAD', { code: 'METHOD_NOT_ALLOWED' }])
  const head = await fetch(`${String(fastify.metricsAddress)}/metrics`, { method: 'HEAD' })
  t.match([head.status, head.headers.get('content-type')], [200, /^text\/plain/], 'HEAD answers like GET')
  const query = await get(`${String(fastify.metricsAddress)}/metrics?x=1`)
  t.match([query.status, query.text], [200, /http_server_request_duration_seconds/], 'a query string is ignored')
})

t.test('the public port does not serve /metrics', async (t) => {
  t.equal((await get(`${address}/metrics`)).status, 404)
})

t.test('METRICS_PORT=0: no listener', async (t) => {
  const quiet = await buildWithDemoData(t, { config: { METRICS_PORT: 0 } })
  t.equal(quiet.metricsAddress, null)
})
