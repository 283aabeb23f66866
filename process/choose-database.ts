// The one place that decides which MongoDB the service and its tests talk to.
import { spawn } from 'node:child_process'
import { extname } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { readConfig } from '../plugins/config.js'
import { startEmbeddedMongod, type MongodOptions } from './embedded-mongod.js'

export interface ChosenDatabase {
  uri: string
  kind: 'external' | 'mongodb-memory-server' | 'offline-mongodb'
  /** Why this one was chosen, for the one log line. */
  reason: string
  /** Embedded databases start empty and are seeded with demo data by `npm start`. */
  embedded: boolean
  close: () => Promise<void>
}

export interface ChooseOptions extends Omit<MongodOptions, 'env' | 'insist'> {
  env?: NodeJS.ProcessEnv
  /** Hears what is being tried, as it is tried (process/service.ts logs it). */
  onProgress?: (message: string) => void
  /** The offline stand-in in a process of its own (as `npm start` runs it), rather than in this one. */
  standInProcess?: boolean
}

export class ProductionNeedsMongoError extends Error {
  constructor () {
    super('MONGODB_URI is required when NODE_ENV=production: ' +
      'the embedded databases are for development, demos and tests only')
    this.name = 'ProductionNeedsMongoError'
  }
}

export class EmbeddedMongodError extends Error {
  constructor (why: string) {
    super(`EMBEDDED_DATABASE=mongod, and no mongod replica set could be had: ${why}. ` +
      'Unset EMBEDDED_DATABASE to fall back to the offline stand-in')
    this.name = 'EmbeddedMongodError'
  }
}

/**
 * MONGODB_URI when set; else the embedded database EMBEDDED_DATABASE asks for: by default
 * (auto) mongod as a one-member replica set where it can be had, else the offline stand-in.
 */
export async function chooseDatabase (options: ChooseOptions = {}): Promise<ChosenDatabase> {
  const { env = process.env, onProgress } = options
  if (env.MONGODB_URI !== undefined && env.MONGODB_URI !== '') {
    return {
      uri: env.MONGODB_URI,
      kind: 'external',
      reason: 'MONGODB_URI is set',
      embedded: false,
      close: async () => {}
    }
  }
  if (env.NODE_ENV === 'production') throw new ProductionNeedsMongoError()
  // The same check as at start-up (server.ts), for the tests and tools that come here directly.
  const choice = readConfig({ EMBEDDED_DATABASE: env.EMBEDDED_DATABASE }).EMBEDDED_DATABASE

  let why = 'EMBEDDED_DATABASE=stand-in'
  if (choice === 'stand-in') {
    onProgress?.('no MONGODB_URI: starting an embedded database, the offline stand-in (EMBEDDED_DATABASE=stand-in)')
  } else {
    const fallback = choice === 'auto'
      ? ' where it can be had, else the offline stand-in'
      : ' (EMBEDDED_DATABASE=mongod)'
    onProgress?.("no MONGODB_URI: starting an embedded database, MongoDB's own mongod as a one-member replica set " +
      `through mongodb-memory-server${fallback}`)
    const mongod = await startEmbeddedMongod({ ...options, env, insist: choice === 'mongod' })
    if ('uri' in mongod) {
      return {
        uri: mongod.uri,
        kind: 'mongodb-memory-server',
        reason: `no MONGODB_URI; ${mongod.why}`,
        embedded: true,
        close: mongod.close
      }
    }
    if (choice === 'mongod') throw new EmbeddedMongodError(mongod.why)
    why = mongod.why
  }
  const offline = options.standInProcess === true
    ? await startStandInProcess()
    : await (await import('../offline-mongodb/server.js')).start({ port: 0 })
  return {
    uri: offline.uri,
    kind: 'offline-mongodb',
    reason: choice === 'stand-in' ? `no MONGODB_URI; ${why}` : `no MONGODB_URI and no mongod (${why})`,
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
  // A process group of its own: a terminal's Ctrl-C, sent to the service's group, would stop the
  // database at once, under the service's drain. It stops when told to, or when its stdin ends.
  const child = spawn(process.execPath, [...nodeOptions, '--allow-natives-syntax', cli, '--port', '0', '--with-stdin'],
    { stdio: ['pipe', 'pipe', 'inherit'], detached: true })
  const exited = new Promise<void>((resolve) => child.once('exit', () => { resolve() }))
  const uri = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error('the offline stand-in did not print its URI within 30 s'))
    }, 30_000)
    createInterface({ input: child.stdout }).once('line', (line) => { clearTimeout(timer); resolve(line) })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the offline stand-in exited with ${String(code ?? signal)} before it listened`))
    })
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

export function describeDatabase (db: ChosenDatabase): string {
  return `database: ${db.kind} (${db.reason})`
}
