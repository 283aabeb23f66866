// `npm test -- <files>` runs just those files; `npm test` alone, the whole suite in its two runs.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { RUN_AFTER, tapRuns } from '../../tools/run-tests.js'

const ROOT = path.resolve(import.meta.dirname, '..', '..')

t.test('npm test is tools/run-tests.ts, which gets what follows `--`', async (t) => {
  const { scripts } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
  t.equal(scripts.test, 'tsx tools/run-tests.ts')
})

t.test('files or folders: one tap run of just those, with the options given', async (t) => {
  t.same(tapRuns(['test/lib/slot-set.test.ts']), [['test/lib/slot-set.test.ts']])
  t.same(tapRuns(['test/lib/slot-sett.test.ts']), [['test/lib/slot-sett.test.ts']],
    'a misspelt file is left to tap to report')
})

t.test('a folder: its test files, one by one, which tap runs although its exclude names the folder', async (t) => {
  const [run] = tapRuns(['--bail', 'test/lib', 'client/test/retries.test.ts'])
  t.equal(run?.[0], '--bail')
  t.ok(run?.includes('test/lib/slot-set.test.ts') && run.includes('test/lib/kept-key.test.ts'), 'the folder\'s files')
  t.equal(run?.at(-1), 'client/test/retries.test.ts', 'then the file given')
  t.notOk(run?.includes('test/lib'), 'not the folder itself')
  const client = tapRuns(['client'])[0] ?? []
  t.ok(client.length > 3 && client.every((file) => file.startsWith('client/test/') && file.endsWith('.test.ts')),
    `client: ${client.length} files`)
  t.notOk(client.some((file) => file.includes('node_modules')), 'none from its node_modules')
})

t.test('nothing, or options alone: tap\'s run, then the files that need a core to themselves, ' +
  'with the options', async (t) => {
  t.same(tapRuns([]), [[], ['--jobs=2', '--serial=test/rehearsal', ...RUN_AFTER]])
  t.same(tapRuns(['--grep', 'cursor'], () => false),
    [['--grep', 'cursor'], ['--jobs=2', '--serial=test/rehearsal', '--grep', 'cursor', ...RUN_AFTER]],
    'an option\'s value is no file')
})
