// A group of test files shares one process (test/_groups/groups.ts); a file that hangs there
// must fail in its own time limit, not the group's, and be named in tap's report; the group's
// last test says what CPU each file cost.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import path from 'node:path'
import t, { type Test } from 'tap'
import { NODE, nodeArgs } from '../helpers/node-child.js'

const GROUPS_MODULE = path.join(import.meta.dirname, '..', '_groups', 'groups.ts')

/** Writes `files` beside a group of them (run in that order), runs it, and gives what it printed. */
function runFixtureGroup (t: Test, files: Record<string, string>, defaultMs?: number): SpawnSyncReturns<string> {
  const order = JSON.stringify(Object.keys(files))
  const dir = t.testdir({
    ...files,
    'group.ts': `import path from 'node:path'\nimport { runFiles } from ${JSON.stringify(GROUPS_MODULE)}\n` +
      `runFiles('a fixture', ${order}.map((f) => path.join(import.meta.dirname, f))` +
      `${defaultMs === undefined ? '' : `, ${defaultMs}`})\n`
  })
  return spawnSync(NODE, nodeArgs(['--import=tsx', path.join(dir, 'group.ts')], { coverage: false }),
    { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' })
}

t.test('a hanging file of a group fails within its own time limit, and the report names it', async (t) => {
  // The group's own limit is ten minutes: ending within the kill's bound means the file's 1 s applied.
  const run = runFixtureGroup(t, {
    'passes.test.ts': "import t from 'tap'\nt.test('passes', async (t) => { t.pass('first') })\n",
    // It waits on a timer, as on a hung socket, which it lets go once tap has given up on it
    // (the root's 'timeout'), so that the process ends without tap's kill ten seconds later.
    'hangs.test.ts': "import t from 'tap'\nt.setTimeout(1000)\n" +
      "t.test('waits forever', async () => { await new Promise(() => { const timer = setInterval(() => {}, 60_000); " +
      "t.on('timeout', () => { clearInterval(timer) }) }) })\n"
  }, 600_000)
  t.equal(run.signal, null, 'the process ended by itself, not by the kill')
  t.not(run.status, 0, 'it failed')
  t.match(run.stdout, /ok \d+ - passes/, 'the file before it passed')
  t.match(run.stdout, /not ok \d+ - timeout!/, 'the hanging test timed out')
  t.match(run.stdout, /fileName: .*hangs\.test\.ts/, 'the report names the hanging file')
  t.match(run.stdout, /hangs\.test\.ts: its tests follow[\s\S]*time limit 1000 ms/, 'its time limit was its own')
})

t.test('the last test lists the CPU each file cost, its child processes included, most first', async (t) => {
  // Each burns CPU seconds of its own, counted by the clock that counts them, whatever the load.
  const burn = (ms: number): string =>
    `const since = process.cpuUsage(); while (process.cpuUsage(since).user < ${ms * 1000}) {}`
  const run = runFixtureGroup(t, {
    'idle.test.ts': "import t from 'tap'\nt.test('idles', async (t) => { t.pass('done') })\n",
    'burns.test.ts': `import t from 'tap'\nt.test('burns', async (t) => { ${burn(300)}; t.pass('done') })\n`,
    'spawns.test.ts': "import { spawnSync, type SpawnSyncReturns } from 'node:child_process'\nimport t from 'tap'\n" +
      `t.test('spawns', async (t) => { spawnSync(process.execPath, ['-e', ${JSON.stringify(burn(700))}]); ` +
      "t.pass('done') })\n"
  })
  t.equal(run.status, 0, 'the group passed')
  const report = run.stdout.slice(run.stdout.indexOf('CPU seconds of each file of a fixture'))
  const rows = [...report.matchAll(/^\s*# (\d+\.\d) \S*?([^/\s]+\.test\.ts)$/gm)].map(([, s, name]) => [Number(s), name])
  t.same(rows.map(([, name]) => name), ['spawns.test.ts', 'burns.test.ts', 'idle.test.ts'], 'most first')
  t.ok(Number(rows[0]?.[0]) >= 0.7, `the child's CPU counts for the file that started it: ${String(rows[0]?.[0])} s`)
  t.ok(Number(rows[1]?.[0]) >= 0.3, `a file's own CPU: ${String(rows[1]?.[0])} s`)
  t.match(report, /ok \d+ - every file is counted/)
})
