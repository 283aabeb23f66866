import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import tap from 'tap'
import { isTestFile } from '../../tools/run-tests.js'

// Most test files share a process, a group, and the CPU a process spends before its first test:
// each group is a file here named after it, which imports its files one after the other, each
// under its own time limit (runFiles). How `npm test` runs them: docs/architecture.md, "Tests".

interface Group {
  /** Folders from the repository's root; every test file under them, unless `only` narrows it. */
  folders: string[]
  /** Which of their files, by file name (a folder too slow for one process is split in two). */
  only?: RegExp
  /** Test files besides (paths from the repository's root). */
  files?: string[]
}

const ROOT = path.join(import.meta.dirname, '..', '..')

/**
 * The unit tier (`npm run test:unit`, which runs this group alone): no database, network, child
 * process, browser, nginx or python (test/tools/unit-tier.test.ts). A process of their own, where
 * a test may fake the process's timers (node:test's mock.timers) without stopping the clients and
 * apps of another file; one process for all of them, as each process pays again for tsx, tap's
 * hooks and its imports.
 */
export const UNIT_FILES: string[] = [
  'test/engines.test.ts',
  'test/database/collation.test.ts',
  'test/database/readiness-start.test.ts',
  'test/access-control/key-set.test.ts',
  'test/changes/availability.test.ts',
  'test/changes/catch-up.test.ts',
  'test/changes/cluster-time.test.ts',
  'test/changes/feed-stream.test.ts',
  'test/changes/feed-token.test.ts',
  'test/changes/quiet-reads.test.ts',
  'test/changes/stream-read.test.ts',
  'test/changes/recent-changes.test.ts',
  'test/changes/waiters.test.ts',
  'test/lib/kept-key.test.ts',
  'test/lib/lazy-query.test.ts',
  'test/lib/pause.test.ts',
  'test/lib/series-histogram.test.ts',
  'test/lib/shared-serializers.test.ts',
  'test/lib/slot-set.test.ts',
  'test/lib/text-seal.test.ts',
  'test/list-endpoint/bson-json.test.ts',
  'test/list-endpoint/bson-page.test.ts',
  'test/list-endpoint/bson-walk.test.ts',
  'test/list-endpoint/kept-documents.test.ts',
  'test/list-endpoint/cursor.test.ts',
  'test/list-endpoint/cursor-binding.test.ts',
  'test/list-endpoint/keyset.test.ts',
  'test/changes/shared-probes.test.ts',
  'test/list-endpoint/hmac-sha256.test.ts',
  'test/list-endpoint/hmac-fallback.test.ts',
  'test/process/signals.test.ts',
  'test/list-endpoint/paging.test.ts',
  'test/list-endpoint/project-cache.test.ts',
  'test/list-query/elem-match.test.ts',
  'test/list-query/filter-identity.test.ts',
  'test/list-query/operator-matrix.test.ts',
  'test/list-query/spec-examples.test.ts',
  'test/list-query/values.test.ts',
  'test/list-query/values-parameters.test.ts',
  'test/mongodb-regex/rules.test.ts',
  'test/mongodb-regex/caseless.test.ts',
  'client/test/retries.test.ts',
  'client/test/guards.test.ts',
  'test/demo-data/generate.test.ts',
  'test/list-query/precise-problems.test.ts',
  'test/deploy/compose.test.ts'
]

export const GROUPS: Record<string, Group> = {
  unit: { folders: [], files: UNIT_FILES },
  'plugins-a-to-l': { folders: ['test/plugins'], only: /^[a-l]/ },
  'plugins-m-to-z': { folders: ['test/plugins'], only: /^[m-z]/ },
  routes: { folders: ['test/routes'] },
  'list-query': { folders: ['test/list-query'] },
  'pages-and-regexes': { folders: ['test/list-endpoint', 'test/lib', 'test/mongodb-regex'] },
  'database-and-tooling': {
    folders: [
      'test/offline-mongodb', 'test/database', 'test/demo-data', 'test/deploy', 'test/process', 'test/docs',
      'test/tools'
    ],
    files: ['test/architecture.test.ts', 'test/dockerfile.test.ts']
  },
  // The typed client, and Swagger UI in a browser: the API as its clients see it.
  clients: { folders: ['client/test', 'test/browser'] },
  // The change feeds; named so that the two fault groups, which take longer, start before it.
  feeds: { folders: ['test/changes'] },
  // Most fault files wait on their broken databases: they start early, in two processes beside the
  // busier groups. The slow-clients file needs a core to itself (a thousand connections) and has
  // a process of its own; readiness and slow-database need it more: npm test runs them after.
  'faults-a-to-o': { folders: ['test/faults'], only: /^(?!readiness|slow-)[a-o]/ },
  'faults-p-to-z': { folders: ['test/faults'], only: /^(?!readiness|slow-)[p-z]/ }
}

/** A file's time limit in a group unless it sets its own (tap's `timeout` in package.json, for a file alone). */
const FILE_TIMEOUT_MS = 90_000

/** The test files of a group (paths from the repository's root), sorted as tap lists files. */
export function filesOf ({ folders, only, files = [] }: Group): string[] {
  return folders.flatMap((folder) => readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => isTestFile(name) && (only?.test(path.basename(name)) ?? true))
    .map((name) => path.join(folder, name))
    .filter((file) => !UNIT_FILES.includes(file)))
    .concat(files)
    .sort()
}

/**
 * Runs the group that `file` (a group's file) is named after: each test file's tests after the
 * file before, as they are written (each imports `tap` and adds its tests to the process's root).
 */
export function runGroup (file: string): void {
  const name = path.basename(file, '.test.ts')
  const group = GROUPS[name]
  if (group === undefined) throw new Error(`${file} names no group of test/_groups/groups.ts`)
  runFiles(`the group ${name}`, filesOf(group).map((file) => path.join(ROOT, file)))
}

/**
 * CPU seconds this process has used, with its children once they have ended (proc(5): utime,
 * stime, cutime and cstime, in ticks of USER_HZ, which Linux keeps at 100); elsewhere its own.
 */
function cpuSeconds (): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? []
    const ticks = fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0)
    if (Number.isFinite(ticks)) return ticks / 100
  } catch {}
  const { user, system } = process.cpuUsage()
  return (user + system) / 1e6
}

/**
 * Imports `files` (absolute paths) inside a first test, so that the root has work queued while
 * they load (tap ends a root that sits idle). Before each file's tests, a test named after the
 * file sets the process's time limit to that file's own (the `t.setTimeout` of its top level,
 * held back while it loads, or `defaultMs`): a file that hangs fails alone, in its own time,
 * and tap's report names it (the `at` of the test it was in). A last test lists the CPU each
 * file cost, loading and tests (those of files beside it in the process too): where the
 * suite's time goes.
 */
export function runFiles (label: string, files: string[], defaultMs = FILE_TIMEOUT_MS): void {
  const spent = new Map<string, number>()
  const charge = (name: string, since: number): void => {
    spent.set(name, (spent.get(name) ?? 0) + cpuSeconds() - since)
  }
  let running: { name: string, since: number } | undefined
  const stopCharging = (): void => { if (running !== undefined) charge(running.name, running.since) }
  tap.test(`loads the ${files.length} test files of ${label}`, async (t) => {
    const setTimeout = tap.setTimeout.bind(tap)
    for (const file of files) {
      const limit = { ms: defaultMs }
      const name = path.relative(ROOT, file)
      tap.test(`${name}: its tests follow`, async (t) => {
        stopCharging()
        running = { name, since: cpuSeconds() }
        setTimeout(limit.ms)
        t.pass(`time limit ${limit.ms} ms`)
      })
      tap.setTimeout = (ms: number) => { limit.ms = ms }
      const since = cpuSeconds()
      try {
        await import(pathToFileURL(file).href)
      } finally {
        tap.setTimeout = setTimeout
        charge(name, since)
      }
      t.pass(name)
    }
    tap.test(`CPU seconds of each file of ${label}, most first`, async (t) => {
      stopCharging()
      for (const [name, seconds] of [...spent].sort(([, a], [, b]) => b - a)) t.comment(`${seconds.toFixed(1)} ${name}`)
      t.equal(spent.size, files.length, 'every file is counted')
    })
  })
}
