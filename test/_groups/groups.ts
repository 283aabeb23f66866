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
 * The unit tier (package.json's `test:unit`): a process of their own, where a test may fake the
 * process's timers (node:test's mock.timers) without stopping the clients and apps of another file.
 */
export const UNIT_FILES: string[] =
  (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
    .scripts['test:unit']?.split(' ').filter((word) => word.endsWith('.test.ts')) ?? []

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
 * Imports `files` (absolute paths) inside a first test, so that the root has work queued while
 * they load (tap ends a root that sits idle). Before each file's tests, a test named after the
 * file sets the process's time limit to that file's own (the `t.setTimeout` of its top level,
 * held back while it loads, or `defaultMs`): a file that hangs fails alone, in its own time,
 * and tap's report names it (the `at` of the test it was in).
 */
export function runFiles (label: string, files: string[], defaultMs = FILE_TIMEOUT_MS): void {
  tap.test(`loads the ${files.length} test files of ${label}`, async (t) => {
    const setTimeout = tap.setTimeout.bind(tap)
    for (const file of files) {
      const limit = { ms: defaultMs }
      const name = path.relative(ROOT, file)
      tap.test(`${name}: its tests follow`, async (t) => {
        setTimeout(limit.ms)
        t.pass(`time limit ${limit.ms} ms`)
      })
      tap.setTimeout = (ms: number) => { limit.ms = ms }
      try {
        await import(pathToFileURL(file).href)
      } finally {
        tap.setTimeout = setTimeout
      }
      t.pass(name)
    }
  })
}
