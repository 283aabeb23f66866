// The one place that decides which MongoDB the service and its tests talk to.
import { spawn } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { extname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export interface ChosenDatabase {
  uri: string
  kind: 'external' | 'mongodb-memory-server' | 'offline-mongodb'
  /** Why this one was chosen, for the one log line. */
  reason: string
  /** Embedded databases start empty and are seeded with demo data by `npm start`. */
  embedded: boolean
  close: () => Promise<void>
}

export interface ChooseOptions {
  env?: NodeJS.ProcessEnv
  /** How long a first download of mongod may take, once its site answers, before the stand-in is used instead. */
  downloadTimeoutMs?: number
  /** How long the download site has to answer at all: a machine without internet learns it this soon. */
  probeTimeoutMs?: number
  /** Hears what is being tried, as it is tried (process/service.ts logs it). */
  onProgress?: (message: string) => void
  /** Where a failed download is remembered. */
  failureMark?: string
  /** The offline stand-in in a process of its own (as `npm start` runs it), rather than in this one. */
  standInProcess?: boolean
}

/** A failed download is remembered for an hour, so that each test process does not retry it. */
const FAILED_DOWNLOAD_MARK = join(tmpdir(), 'listing-api-mongod-download-failed')
const RETRY_DOWNLOAD_AFTER_MS = 60 * 60 * 1000
/** Where mongodb-memory-server downloads from, unless its own variables say otherwise. */
const DOWNLOAD_SITE = 'https://fastdl.mongodb.org'

export class ProductionNeedsMongoError extends Error {
  constructor () {
    super('MONGODB_URI is required when NODE_ENV=production: the embedded databases are for development, demos and tests only')
    this.name = 'ProductionNeedsMongoError'
  }
}

export async function chooseDatabase (options: ChooseOptions = {}): Promise<ChosenDatabase> {
  const { env = process.env } = options
  if (env.MONGODB_URI !== undefined && env.MONGODB_URI !== '') {
    return { uri: env.MONGODB_URI, kind: 'external', reason: 'MONGODB_URI is set', embedded: false, close: async () => {} }
  }
  if (env.NODE_ENV === 'production') throw new ProductionNeedsMongoError()

  options.onProgress?.('no MONGODB_URI: starting an embedded database (MongoDB\'s own mongod through mongodb-memory-server when it can be had, else the offline stand-in)')
  const binary = await findMongod(env, options)
  if (binary.path !== undefined) {
    const { MongoMemoryServer } = await import('mongodb-memory-server')
    // Test commands allow the maxTimeAlwaysTimeOut fail point that the timeout tests use.
    const server = await MongoMemoryServer.create({
      binary: { systemBinary: binary.path },
      instance: { args: ['--setParameter', 'enableTestCommands=1'] }
    })
    return {
      uri: server.getUri(),
      kind: 'mongodb-memory-server',
      reason: `no MONGODB_URI; mongod found (${binary.why})`,
      embedded: true,
      close: async () => { await server.stop() }
    }
  }
  const offline = options.standInProcess === true
    ? await startStandInProcess()
    : await (await import('../offline-mongodb/server.js')).start({ port: 0 })
  return {
    uri: offline.uri,
    kind: 'offline-mongodb',
    reason: `no MONGODB_URI and no mongod binary (${binary.why})`,
    embedded: true,
    close: offline.close
  }
}

/**
 * The stand-in as `npm run db` runs it, in a process of its own: with `--allow-natives-syntax`
 * on its command line, which its regex bound needs (offline-mongodb/regex.ts), while this
 * process keeps the flags it was given. It stops with this process (its standard input ends).
 */
async function startStandInProcess (): Promise<{ uri: string, close: () => Promise<void> }> {
  const cli = fileURLToPath(new URL(`../offline-mongodb/cli${extname(import.meta.filename)}`, import.meta.url))
  // This process's node options (tsx's loader when run from the sources), without a debugger port.
  const nodeOptions = process.execArgv.filter((arg) => !arg.startsWith('--inspect'))
  const child = spawn(process.execPath, [...nodeOptions, '--allow-natives-syntax', cli, '--port', '0', '--with-stdin'], { stdio: ['pipe', 'pipe', 'inherit'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve() }))
  const uri = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('the offline stand-in did not print its URI within 30 s')) }, 30_000)
    createInterface({ input: child.stdout }).once('line', (line) => { clearTimeout(timer); resolve(line) })
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`the offline stand-in exited with ${String(code ?? signal)} before it listened`)) })
  })
  return {
    uri,
    close: async () => {
      child.kill('SIGTERM')
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(killer)
    }
  }
}

async function findMongod (env: NodeJS.ProcessEnv, options: ChooseOptions): Promise<{ path?: string, why: string }> {
  const { downloadTimeoutMs: timeoutMs = 120_000, probeTimeoutMs = 2000, onProgress, failureMark = FAILED_DOWNLOAD_MARK } = options
  if (env.MONGOMS_SYSTEM_BINARY) return { path: env.MONGOMS_SYSTEM_BINARY, why: 'MONGOMS_SYSTEM_BINARY' }
  // Within the hour after a failed download nothing is looked for, not even a binary put in
  // mongodb-memory-server's cache meanwhile (MONGOMS_SYSTEM_BINARY names one, or delete the
  // mark): loading mongodb-memory-server to look costs every test process half a second of CPU.
  const lastFailure = await readFile(failureMark, 'utf8').catch(() => '')
  const [at, ...message] = lastFailure.split('\n')
  if (Date.now() - Number(at) < RETRY_DOWNLOAD_AFTER_MS) return { why: `download failed recently: ${message.join(' ')}` }

  let memoryServer: typeof import('mongodb-memory-server')
  try {
    memoryServer = await import('mongodb-memory-server')
  } catch {
    return { why: 'mongodb-memory-server is not installed' }
  }
  const { DryMongoBinary, MongoBinary } = memoryServer
  const located = await DryMongoBinary.locateBinary(await DryMongoBinary.generateOptions())
  if (located !== undefined) return { path: located, why: `already downloaded: ${located}` }

  const failed = async (reason: string) => {
    await writeFile(failureMark, `${Date.now()}\n${reason}`).catch(() => {})
    return { why: `download failed: ${reason}` }
  }

  // mongodb-memory-server retries a site it cannot reach for several seconds, silently: the
  // site is asked first, briefly, so that a machine without internet starts at once.
  const site = downloadSite(env)
  const unreachable = await probe(site, probeTimeoutMs, env)
  if (unreachable !== undefined) return await failed(`${site} did not answer in ${probeTimeoutMs} ms (${unreachable})`)
  onProgress?.(`downloading mongod from ${site} (once; up to ${Math.round(timeoutMs / 1000)} s, then the offline stand-in)`)

  let timer: NodeJS.Timeout | undefined
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)
      timer.unref()
    })
    const path = await Promise.race([MongoBinary.getPath(), timeout])
    return { path, why: `downloaded to ${path}` }
  } catch (error) {
    return await failed((error instanceof Error ? error.message : String(error)).split('\n').pop()?.trim() ?? 'unknown error')
  } finally {
    clearTimeout(timer)
  }
}

/** The origin mongodb-memory-server downloads from (its MONGOMS_DOWNLOAD_URL or _MIRROR, else MongoDB's). */
function downloadSite (env: NodeJS.ProcessEnv): string {
  const configured = env.MONGOMS_DOWNLOAD_URL ?? env.MONGOMS_DOWNLOAD_MIRROR
  try {
    return new URL(configured ?? DOWNLOAD_SITE).origin
  } catch {
    return DOWNLOAD_SITE
  }
}

/**
 * Why `site` cannot be reached within `ms`, or undefined when it answers at all (any HTTP
 * status). Behind a proxy (HTTPS_PROXY and the like, which fetch does not use) the download
 * is left to decide.
 */
async function probe (site: string, ms: number, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].some((name) => (env[name] ?? '') !== '')) return undefined
  try {
    const response = await fetch(site, { method: 'HEAD', redirect: 'manual', signal: AbortSignal.timeout(ms) })
    await response.body?.cancel()
    return undefined
  } catch (error) {
    const cause = (error as { cause?: { code?: string, message?: string } }).cause
    return cause?.code ?? cause?.message ?? (error as Error).message
  }
}

export function describeDatabase (db: ChosenDatabase): string {
  return `database: ${db.kind} (${db.reason})`
}
