// The client against the service itself (its own process, on the test database behind the fault
// proxy of test/faults/): a walk of every list equals the unpaged list; a walk through a database
// outage and a blackhole resumes and is still exact; the sync job of examples/ runs.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
import { seedDemoData } from '../../demo-data/seed.js'
import { proxiedDatabase } from '../../test/faults/fault-app.js'
import { startService } from '../../test/faults/service-process.js'
import { uniqueDatabaseName } from '../../test/helpers/database.js'
import { NESTED_LISTS } from '../../test/helpers/lists.js'
import { createClient, type ListName, type RetryEvent } from '../src/index.js'
import { NODE, nodeArgs } from '../../test/helpers/node-child.js'

t.setTimeout(180_000)
const ROOT = path.join(import.meta.dirname, '..', '..')
const run = promisify(execFile)
const proxy = await proxiedDatabase(t)
const dbName = uniqueDatabaseName('client')
await seedDemoData(proxy.uri, dbName)
const service = await startService({ MONGODB_URI: proxy.uri, MONGODB_DB: dbName, QUERY_TIMEOUT_MS: '1000' })
t.teardown(() => { service.child.kill('SIGKILL') })

const retries: RetryEvent[] = []
/** Called at the client's next retry: a fault is healed once the client has met it. */
let atNextRetry: (() => void) | undefined
// The client's default retries: they must ride out the faults below.
const client = createClient({
  baseUrl: service.url,
  onRetry: (event) => {
    retries.push(event)
    const then = atNextRetry
    atNextRetry = undefined
    then?.()
  }
})
const { data: projects } = await client.list('projects', { sort: '+name', fields: ['name'] })
const NESTED = [
  'activities', 'categories', 'places', 'sessions', 'stewards', 'teams', 'registrations'
] as const satisfies ListName[]

t.test('a walk of each list, page by page, equals the unpaged list', async (t) => {
  t.same([...NESTED].sort(), NESTED_LISTS, 'every list of a project')
  t.equal(projects.length, 3)
  for (const project of projects) {
    for (const list of NESTED) {
      const whole = await client.list(list, { projectId: project._id, limit: 1000, count: true })
      t.equal(whole.data.length, whole.total, `${list}: the unpaged list is whole`)
      const walked = []
      for await (const document of client.all(list, { projectId: project._id, pageSize: 37 })) walked.push(document)
      t.same(walked, whole.data, `${project.name ?? ''}: ${list}, ${walked.length} documents`)
    }
  }
  const publicProjects = []
  for await (const p of client.all('public-projects', { pageSize: 1 })) publicProjects.push(p._id)
  t.same(publicProjects, (await client.list('public-projects', {})).data.map((p) => p._id),
    'public-projects, one per page')
})

t.test('a filtered, sorted walk of chosen fields', async (t) => {
  const projectId = projects[0]?._id as string
  const query = {
    projectId,
    filter: { start: { $gte: '2024-06-15' }, places: { $size: 1 } },
    sort: ['-start', '+name'],
    fields: ['name', 'start']
  } as const
  const whole = await client.list('sessions', { ...query, limit: 1000 })
  const walked = []
  for await (const session of client.all('sessions', { ...query, pageSize: 9 })) walked.push(session)
  t.ok(walked.length > 9, `${walked.length} sessions over several pages`)
  t.same(walked, whole.data)
  t.ok(walked.every((s) => Object.keys(s).every((key) => ['_id', 'name', 'start'].includes(key))),
    'only the fields asked for')
  const problem = await client.list('sessions', { projectId, sort: '+nmae' as '+name' }).catch((e: unknown) => e)
  t.match(problem, {
    name: 'ListingProblem',
    status: 400,
    code: 'INVALID_SORT',
    errors: [{ param: 'sort', code: 'INVALID_SORT' }],
    requestId: /.+/
  })
})

t.test('a walk through a database outage and a blackhole resumes and stays exact', async (t) => {
  const projectId = projects[1]?._id as string
  const whole = await client.list('registrations', { projectId, limit: 1000 })
  retries.length = 0
  const walked = []
  let pages = 0
  const healed: string[] = []
  // The next page meets the fault; the client's retry says it did, and the fault ends then.
  const healing = (fault: string) => () => {
    healed.push(fault)
    proxy.heal()
  }
  for await (const page of client.pages('registrations', { projectId, pageSize: 40 })) {
    walked.push(...page.data)
    pages++
    if (pages === 5) {
      proxy.outage()
      atNextRetry = healing('outage')
    }
    if (pages === 15) {
      proxy.blackhole()
      atNextRetry = healing('blackhole')
    }
  }
  // A fault the walk never met must not outlive it.
  atNextRetry = undefined
  proxy.heal()
  t.same(healed, ['outage', 'blackhole'], 'the walk met each fault, and retried')
  t.equal(pages, 25)
  t.same(walked, whole.data, `${walked.length} registrations, none lost or repeated`)
  t.ok(retries.some((r) => /503/.test(r.reason)), `retried: ${retries.map((r) => r.reason).join(', ')}`)
})

t.test('the sync job of examples/ copies a project\'s registrations', async (t) => {
  const projectId = projects[0]?._id as string
  const state = path.join(mkdtempSync(path.join(tmpdir(), 'sync-')), 'registrations.json')
  // The example imports the package as a user would: from its build. Child processes are awaited,
  // never run synchronously: the fault proxy in this process must keep forwarding meanwhile.
  await run(NODE, nodeArgs([
    path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(ROOT, 'client')
  ], { coverage: false }))
  const sync = await run(NODE, nodeArgs(['--import', 'tsx', path.join(ROOT, 'examples', 'sync-registrations.ts')]), {
    env: { ...process.env, LISTING_API_URL: service.url, PROJECT_ID: projectId, STATE_FILE: state },
    timeout: 60_000
  })
  const synced = JSON.parse(readFileSync(state, 'utf8')) as { registrations: Record<string, unknown>, cursor?: string }
  const whole = await client.list('registrations', { projectId, limit: 1000, fields: ['user', 'role'] })
  t.same(Object.keys(synced.registrations).sort(), whole.data.map((r) => r._id).sort(), 'every registration, once')
  t.equal(synced.cursor, undefined, 'a finished walk leaves no cursor')
  t.match(sync.stdout, /synced 1000 registrations/)
})
