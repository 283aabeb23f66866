import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { Test } from 'tap'
import { imageCommand } from '../../lib/image-command.js'
import { NODE, nodeArgs } from '../helpers/node-child.js'
import { timeUntil } from '../helpers/until.js'

const ROOT = path.join(import.meta.dirname, '..', '..')

export interface ServiceProcess {
  child: ChildProcess
  url: string
  /** Every line the process wrote, stdout and stderr. */
  lines: string[]
  exited: Promise<number | null>
}

/** A free loopback port (nothing listens on it when this returns). */
export async function freePort (): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The node flags of the image's command (Dockerfile `CMD ["node", …flags, "dist/server.js"]`). */
export const productionFlags = (): string[] => imageCommand(path.join(ROOT, 'Dockerfile')).nodeFlags

/**
 * `server.ts` as `npm start` runs it (with the image's node flags),
 * in its own process, on loopback; resolves once it listens.
 */
export async function startService (env: Record<string, string>, flags: string[] = []): Promise<ServiceProcess> {
  return await listening(spawn(NODE, nodeArgs([...productionFlags(), ...flags, '--import', 'tsx', 'server.ts']), {
    cwd: ROOT,
    // CURSOR_KEY_FILE=off: no key file left in the checkout's cache, unless a test names one.
    env: {
      ...process.env,
      FASTIFY_AUTOLOAD_TYPESCRIPT: '1',
      METRICS_PORT: '0',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      CURSOR_KEY_FILE: 'off',
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  }))
}

/**
 * A started service process (stdout and stderr piped), once it logs its 'API at' line; rejects after 30 s or on exit.
 */
export async function listening (child: ChildProcess): Promise<ServiceProcess> {
  const lines: string[] = []
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no 'API at' line within 30 s:\n${lines.join('\n')}`)), 30_000)
    for (const stream of [child.stdout, child.stderr]) {
      if (stream === null) continue
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line)
        const address = /API at (http:\/\/[^/\s]+)/.exec(line)
        if (address !== null) {
          clearTimeout(timer)
          resolve(address[1] as string)
        }
      })
    }
    exited.then((code) => reject(new Error(`exited with ${String(code)}:\n${lines.join('\n')}`)))
  })
  return { child, url, lines, exited }
}

export async function get (url: string): Promise<{
  status: number
  type: string
  body: Record<string, unknown> | undefined
}> {
  const res = await fetch(url)
  const type = res.headers.get('content-type') ?? ''
  const text = await res.text()
  return { status: res.status, type, body: type.includes('json') ? JSON.parse(text) : undefined }
}

/**
 * Asks /ready every 100 ms until it answers 200 (a service listens at once and opens its pool
 * meanwhile, as a load balancer learns from /ready): the time that took, or Infinity past `withinMs`.
 */
export async function untilReady (url: string, withinMs = 15_000): Promise<number> {
  return await timeUntil(async () => (await fetch(`${url}/ready`)
    .then(async (res) => { await res.arrayBuffer(); return res.status }, () => 0)) === 200, withinMs, 100)
}

/**
 * Asserts that the service turns ready within `withinMs` (lists answer
 * once the database has answered its first ping), and how long it took.
 */
export async function expectReady (t: Test, url: string, withinMs = 15_000): Promise<void> {
  const ms = await untilReady(url, withinMs)
  t.ok(ms < Infinity, `ready${ms < Infinity ? ` after ${ms} ms` : ` within ${withinMs} ms`}`)
}
