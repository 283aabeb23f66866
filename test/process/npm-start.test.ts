// `npm start` as a supervisor runs it: SIGTERM sent to npm's own process reaches the service,
// which drains and exits 0 with its embedded database, leaving no process behind. npm hands the
// signal to the shell it ran the script in; a shell that ran it as a child would not pass it on.
// And as a person runs it: Ctrl-C in a terminal signals every process of the group at once.
import { execFile, spawn } from 'node:child_process'
import { readFile, readdir } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import t, { type Test } from 'tap'
import { get, listening } from '../faults/service-process.js'
import { resolvesWithin, until } from '../helpers/until.js'

const ROOT = path.join(import.meta.dirname, '..', '..')

/** Whether something accepts connections at `port` on loopback. */
const listens = async (port: number): Promise<boolean> => await new Promise((resolve) => {
  const socket = net.connect(port, '127.0.0.1')
  socket.once('connect', () => { socket.destroy(); resolve(true) })
  socket.once('error', () => { resolve(false) })
})

interface Running { pid: number, parent: number, command: string }

/** The processes running (zombies are not): from Linux's /proc, elsewhere from `ps`. */
async function running (): Promise<Running[]> {
  if (process.platform !== 'linux') {
    const { stdout } = await promisify(execFile)('ps', ['-A', '-o', 'pid=,ppid=,stat=,command='])
    return stdout.split('\n').flatMap((line) => {
      const [, pid, parent, state, command] = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line) ?? []
      return state === undefined || state.startsWith('Z') ? [] : [{ pid: Number(pid), parent: Number(parent), command }]
    })
  }
  const ids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name))
  return (await Promise.all(ids.map(async (id): Promise<Running[]> => {
    const [stat, command] = await Promise.all(['stat', 'cmdline'].map(async (file) =>
      await readFile(`/proc/${id}/${file}`, 'utf8').catch(() => '')))
    // The command's name, in parentheses, may hold spaces: the fields after it are state, then parent.
    const [state, parent] = (stat ?? '').slice((stat ?? '').lastIndexOf(')') + 2).split(' ')
    return state === undefined || state === '' || state === 'Z'
      ? []
      : [{ pid: Number(id), parent: Number(parent), command: (command ?? '').replaceAll('\0', ' ') }]
  }))).flat()
}

/** The service's log records, by message. */
const logged = (lines: string[], message: RegExp): Array<{ time: number, msg: string }> => lines
  .filter((line) => line.startsWith('{'))
  .map((line) => JSON.parse(line) as { time: number, msg: string })
  .filter((record) => message.test(record.msg))

/** `npm run <script>` on the embedded stand-in, once the service reaches its database. */
async function startNpm (t: Test, script: string, env: Record<string, string> = {}) {
  const npm = spawn('npm', ['run', '--silent', script], {
    cwd: ROOT,
    env: {
      ...process.env,
      EMBEDDED_DATABASE: 'stand-in',
      PORT: '0',
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      CURSOR_KEY_FILE: 'off',
      SHUTDOWN_DELAY_MS: '0',
      LOG_LEVEL: 'info',
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own, as a terminal gives a command; should the test fail, the teardown ends
    // npm and all it started.
    detached: true
  })
  t.teardown(() => { try { process.kill(-(npm.pid as number), 'SIGKILL') } catch {} })
  const service = await listening(npm)
  const port = Number(new URL(service.url).port)
  const connected = (): RegExpExecArray | null =>
    /database connected \(127\.0\.0\.1:(\d+)\)/.exec(service.lines.join('\n'))
  t.ok(await until(() => connected() !== null, 15_000), 'the service reaches its database')
  t.ok(await listens(port) && await listens(Number(connected()?.[1])), 'the service and its database listen')
  // Nothing between npm and the service that could end it without its drain: the tsx CLI would
  // relay a signal and kill a service too busy to answer it within tens of milliseconds.
  const { pid } = JSON.parse(service.lines.find((line) => line.includes('"pid"')) ?? '{}') as { pid?: number }
  const now = await running()
  const parent = now.find((row) => row.pid === pid)?.parent
  t.match(now.find((row) => row.pid === parent)?.command, /\bnpm\b/, 'the service is npm\'s own child process')
  const started = [Number(pid), ...now.filter((row) => row.parent === pid).map((row) => row.pid)]
  t.equal(started.length, 2, 'the service and its database process')
  // Whether they are gone, by process: a port freed may be taken at once by another test's server.
  const left = async (): Promise<number[]> => {
    const still = new Set((await running()).map((row) => row.pid))
    return started.filter((id) => still.has(id))
  }
  return { npm, service, left }
}

for (const script of ['start', 'demo:writes']) {
  t.test(`npm run ${script}: SIGTERM to npm drains the service, which exits 0 with its database`, async (t) => {
    const { npm, service, left } = await startNpm(t, script)
    npm.kill('SIGTERM')
    t.ok(await resolvesWithin(service.exited, 20_000), 'npm ends')
    t.equal(await service.exited, 0, 'with the service\'s own exit code, 0')
    const [received] = logged(service.lines, /^SIGTERM received/)
    const [closed] = logged(service.lines, /^closed$/)
    t.ok(received !== undefined && closed !== undefined && received.time <= closed.time,
      'the service drained: it logged the signal, then "closed"')
    t.same(await left(), [], 'neither the service nor its database is left running')
  })
}

t.test('npm start and Ctrl-C, SIGINT to its whole group as a terminal sends it: a drain, then exit 0', async (t) => {
  // npm forwards the SIGINT the service also got: the service sees it twice, its database once.
  const { npm, service, left } = await startNpm(t, 'start', { SHUTDOWN_DELAY_MS: '3000' })
  const before = service.lines.length
  const since = (): string[] => service.lines.slice(before)
  process.kill(-(npm.pid as number), 'SIGINT')
  t.ok(await until(() => since().some((line) => line.includes('SIGINT received')), 10_000), 'the service drains')
  const during = await get(`${service.url}/projects?limit=1`)
  t.equal(during.status, 200, 'lists are still served during the drain: the database did not stop with the group')
  t.ok(await resolvesWithin(service.exited, 20_000), 'npm ends')
  t.equal(await service.exited, 0, 'exit code 0: the copy of the signal was let go')
  t.notOk(since().some((line) => /waiting for the database|second SIGINT|MongoTopologyClosedError/.test(line)),
    'no warning that the database is gone, no forced exit')
  t.equal(logged(since(), /^closed$/).length, 1, 'it closed')
  t.same(await left(), [], 'neither the service nor its database is left running')
})
