// Every script that takes options answers --help with its usage (exit 0), and a wrong option
// or value with a one-line reason and the usage (exit 2): never a stack trace.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { NODE, nodeArgs } from '../helpers/node-child.js'

const ROOT = path.join(import.meta.dirname, '..', '..')
// Twelve processes, each starting tsx: more than tap's 30 s on a busy machine.
t.setTimeout(120_000)
const SCRIPTS: Array<[string, string, string[]]> = [
  ['npm run bench', 'bench/run.ts', ['--database', 'nowhere']],
  ['npm run db', 'offline-mongodb/cli.ts', ['--port', 'x']],
  ['npm run seed', 'demo-data/cli.ts', ['--scale', '0']],
  ['npm run token', 'access-control/mint-token.ts', ['--ttl', 'soon']]
]

function run (script: string, args: string[]): { status: number | null, stdout: string, stderr: string } {
  const result = spawnSync(NODE, nodeArgs(['--import', 'tsx', script, ...args]), { cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { ...process.env, MONGODB_URI: '' } })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

for (const [command, script, wrong] of SCRIPTS) {
  t.test(command, async (t) => {
    const help = run(script, ['--help'])
    t.equal(help.status, 0, '--help exits 0')
    t.match(help.stdout, command, 'and prints the usage')
    for (const args of [['--no-such-option'], wrong]) {
      const bad = run(script, args)
      t.equal(bad.status, 2, `${args.join(' ')}: exit 2`)
      t.match(bad.stderr, command, 'with the usage')
      t.notMatch(bad.stderr, /\n\s+at .+:\d+:\d+/, 'and no stack trace')
    }
  })
}
