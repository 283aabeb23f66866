// `npm test -- <files>` runs just those files; `npm test` alone, the whole suite in its two runs.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { RUN_AFTER, tapRuns } from '../../tools/run-tests.js'

const ROOT = path.resolve(import.meta.dirname, '..', '..')

t.test('npm test is tools/run-tests.ts, which gets what follows `--`', async (t) => {
  const { scripts } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  t.equal(scripts.test, 'tsx tools/run-tests.ts')
})

t.test('files or folders: one tap run of just those, with the options given', async (t) => {
  t.same(tapRuns(['test/lib/slot-set.test.ts']), [['test/lib/slot-set.test.ts']])
  t.same(tapRuns(['--bail', 'test/lib', 'client/test/retries.test.ts']), [['--bail', 'test/lib', 'client/test/retries.test.ts']])
  t.same(tapRuns(['test/lib/slot-sett.test.ts']), [['test/lib/slot-sett.test.ts']], 'a misspelt file is left to tap to report')
  t.same(tapRuns(['client']), [['client']], 'a folder')
})

t.test('nothing, or options alone: tap\'s run, then the files that need the machine, with the options', async (t) => {
  t.same(tapRuns([]), [[], ['--jobs=2', '--serial=test/rehearsal', ...RUN_AFTER]])
  t.same(tapRuns(['--grep', 'cursor'], () => false), [['--grep', 'cursor'], ['--jobs=2', '--serial=test/rehearsal', '--grep', 'cursor', ...RUN_AFTER]], 'an option\'s value is no file')
})
