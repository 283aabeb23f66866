// Every script that takes options answers --help with its usage (exit 0), and a wrong option
// or value with a one-line reason and the usage (exit 2): never a stack trace.
import { execFile } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { NODE, nodeArgs } from '../helpers/node-child.js'

const ROOT = path.join(import.meta.dirname, '..', '..')
// Twelve processes, each starting tsx: they can outlast the 90 s a file is given (package.json's tap
// `timeout`, FILE_TIMEOUT_MS in test/_groups/groups.ts) while the rest of the suite runs.
t.setTimeout(120_000)
const SCRIPTS: Array<[string, string, string[]]> = [
  ['npm run bench', 'bench/run.ts', ['--database', 'nowhere']],
  ['npm run db', 'offline-mongodb/cli.ts', ['--port', 'x']],
  ['npm run seed', 'demo-data/cli.ts', ['--scale', '0']],
  ['npm run token', 'access-control/mint-token.ts', ['--ttl', 'soon']]
]

interface Run { status: number | null, killed: boolean, stdout: string, stderr: string }

async function run (script: string, args: string[]): Promise<Run> {
  return await new Promise((resolve) => {
    const child = execFile(NODE, nodeArgs(['--import', 'tsx', script, ...args]), {
      cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { ...process.env, MONGODB_URI: '' }
    }, (error, stdout, stderr) => {
      resolve({ status: child.exitCode, killed: error?.killed === true, stdout, stderr })
    })
  })
}

// The four scripts side by side, each one's three runs in turn: twelve processes starting at once,
// beside the rest of the suite, could outlast the 30 s each is given (and one killed loses its output).
const runs = SCRIPTS.map(([command, script, wrong]) => {
  const help = run(script, ['--help'])
  const bad: Array<{ args: string[], result: Promise<Run> }> = []
  let previous: Promise<unknown> = help
  for (const args of [['--no-such-option'], wrong]) {
    const result = previous.then(async () => await run(script, args))
    bad.push({ args, result })
    previous = result
  }
  return { command, help, bad }
})

for (const { command, help, bad } of runs) {
  t.test(command, async (t) => {
    const helped = await help
    t.notOk(helped.killed, '--help ends within 30 s')
    t.equal(helped.status, 0, '--help exits 0')
    t.match(helped.stdout, command, 'and prints the usage')
    for (const { args, result } of bad) {
      const refused = await result
      t.notOk(refused.killed, `${args.join(' ')}: ends within 30 s`)
      t.equal(refused.status, 2, `${args.join(' ')}: exit 2`)
      t.match(refused.stderr, command, 'with the usage')
      t.notMatch(refused.stderr, /\n\s+at .+:\d+:\d+/, 'and no stack trace')
    }
  })
}
