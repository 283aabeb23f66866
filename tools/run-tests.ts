// `npm test`: given test files or folders (`npm test -- test/lib/slot-set.test.ts`), tap runs
// just those (a folder's test files, named one by one: tap's `exclude` would drop a folder);
// otherwise the whole suite in two runs: tap's own (package.json's `tap` include and exclude),
// then, once it has passed, the files that need a core to themselves.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'

const ROOT = path.join(import.meta.dirname, '..')

/** Run after the others, two side by side and then the rehearsal alone: each needs a core to itself. */
export const RUN_AFTER = [
  'test/faults/readiness.test.ts',
  'test/faults/slow-database.test.ts',
  'test/rehearsal/rehearsal.test.ts'
]

/** Whether an argument names test files (a misspelt path too: tap says so, rather than the whole suite running). */
const isPath = (arg: string, exists: (file: string) => boolean): boolean =>
  !arg.startsWith('-') && (arg.includes('/') || /\.[cm]?[jt]s$/.test(arg) || exists(path.resolve(ROOT, arg)))

/**
 * Whether a path (from anywhere in the repository) is a test file: tap's `exclude` leaves fixtures
 * and builds out.
 */
export const isTestFile = (file: string): boolean =>
  file.endsWith('.test.ts') && !file.split(path.sep).some((part) => /^fixtures?$|^dist$|^node_modules$/.test(part))

/** The test files under a folder (paths as given, below it). */
function testFilesIn (folder: string): string[] {
  return readdirSync(path.resolve(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter(isTestFile)
    .map((name) => path.join(folder, name))
    .sort()
}

const isFolder = (arg: string): boolean =>
  existsSync(path.resolve(ROOT, arg)) && statSync(path.resolve(ROOT, arg)).isDirectory()

/**
 * The tap runs for the arguments given to `npm test`: without a file or folder, options apply to
 * both runs of the suite.
 */
export function tapRuns (args: string[], exists = existsSync): string[][] {
  if (args.some((arg) => isPath(arg, exists))) {
    return [args.flatMap((arg) => isPath(arg, exists) && isFolder(arg) ? testFilesIn(arg) : [arg])]
  }
  return [args, ['--jobs=2', '--serial=test/rehearsal', ...args, ...RUN_AFTER]]
}

if (process.argv[1] === import.meta.filename) {
  const tap = path.join(ROOT, 'node_modules', '.bin', 'tap')
  for (const args of tapRuns(process.argv.slice(2))) {
    const { status } = spawnSync(tap, args, { stdio: 'inherit' })
    if (status !== 0) process.exit(status ?? 1)
  }
}
