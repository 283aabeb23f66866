// A replica whose log reader has gone (a supervisor that died, a collector that closed its pipe)
// still exits on SIGTERM. pino flushes its stream synchronously on exit; sonic-boom before 5
// retried a write that failed with EPIPE there forever (flushSync), so the process hung with its
// port closed. package.json's overrides give pino sonic-boom 5, which gives up instead.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { Readable } from 'node:stream'
import t from 'tap'
import { NODE, nodeArgs } from '../helpers/node-child.js'
import { resolvesWithin } from '../helpers/until.js'

const ROOT = path.join(import.meta.dirname, '..', '..')

t.test('a process whose log reader is gone still exits on SIGTERM', async (t) => {
  const child = spawn(NODE, nodeArgs(['--import', 'tsx', 'test/process/unread-log-writer.ts']), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc']
  })
  // Both are pipes (stdio above); spawn's types know it only without the IPC channel.
  const stdout = child.stdout as Readable
  const stderrPipe = child.stderr as Readable
  t.teardown(() => { child.kill('SIGKILL') })
  let stderr = ''
  stderrPipe.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  const exited = once(child, 'exit')
  // The pipe is full and never read: the logger's last writes are waiting when the reader goes.
  stdout.pause()
  await once(child, 'message')
  stdout.destroy()
  child.kill('SIGTERM')
  // close-with-grace forces the exit after its delay; a hang outlasts any delay.
  t.ok(await resolvesWithin(exited, 10_000), `exited within 10 s of SIGTERM${stderr === '' ? '' : `: ${stderr}`}`)
})

t.test('pino writes through sonic-boom 5, as long as it asks for 4 itself', async (t) => {
  // The package pino itself resolves, and the range it declares.
  const fromPino = createRequire(createRequire(import.meta.url).resolve('pino/package.json'))
  const pino = fromPino('./package.json') as { dependencies: Record<string, string> }
  const sonicBoom = fromPino('sonic-boom/package.json') as { version: string }
  t.match(sonicBoom.version, /^5\./, `pino loads sonic-boom ${sonicBoom.version}`)
  t.match(pino.dependencies['sonic-boom'], /^\^4\./,
    'pino still asks for sonic-boom 4: once it asks for 5, drop the override from package.json')
})
