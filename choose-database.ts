// The one place that decides which MongoDB the service and its tests talk to.
import { readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

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
  /** How long a first download of mongod may take before the stand-in is used instead. */
  downloadTimeoutMs?: number
}

/** A failed download is remembered for an hour, so that each test process does not retry it. */
const FAILED_DOWNLOAD_MARK = join(tmpdir(), 'listing-api-mongod-download-failed')
const RETRY_DOWNLOAD_AFTER_MS = 60 * 60 * 1000

export class ProductionNeedsMongoError extends Error {
  constructor () {
    super('MONGODB_URI is required when NODE_ENV=production: the embedded databases are for development, demos and tests only')
    this.name = 'ProductionNeedsMongoError'
  }
}

export async function chooseDatabase ({ env = process.env, downloadTimeoutMs = 15_000 }: ChooseOptions = {}): Promise<ChosenDatabase> {
  if (env.MONGODB_URI !== undefined && env.MONGODB_URI !== '') {
    return { uri: env.MONGODB_URI, kind: 'external', reason: 'MONGODB_URI is set', embedded: false, close: async () => {} }
  }
  if (env.NODE_ENV === 'production') throw new ProductionNeedsMongoError()

  const binary = await findMongod(env, downloadTimeoutMs)
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
  const { start } = await import('./offline-mongodb/server.js')
  const offline = await start({ port: 0 })
  return {
    uri: offline.uri,
    kind: 'offline-mongodb',
    reason: `no MONGODB_URI and no mongod binary (${binary.why})`,
    embedded: true,
    close: offline.close
  }
}

async function findMongod (env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ path?: string, why: string }> {
  if (env.MONGOMS_SYSTEM_BINARY) return { path: env.MONGOMS_SYSTEM_BINARY, why: 'MONGOMS_SYSTEM_BINARY' }
  let memoryServer: typeof import('mongodb-memory-server')
  try {
    memoryServer = await import('mongodb-memory-server')
  } catch {
    return { why: 'mongodb-memory-server is not installed' }
  }
  const { DryMongoBinary, MongoBinary } = memoryServer
  const located = await DryMongoBinary.locateBinary(await DryMongoBinary.generateOptions())
  if (located !== undefined) return { path: located, why: `already downloaded: ${located}` }

  const lastFailure = await readFile(FAILED_DOWNLOAD_MARK, 'utf8').catch(() => '')
  const [at, ...message] = lastFailure.split('\n')
  if (Date.now() - Number(at) < RETRY_DOWNLOAD_AFTER_MS) return { why: `download failed recently: ${message.join(' ')}` }

  let timer: NodeJS.Timeout | undefined
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)
      timer.unref()
    })
    const path = await Promise.race([MongoBinary.getPath(), timeout])
    return { path, why: `downloaded to ${path}` }
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n').pop()?.trim() ?? 'unknown error'
    await writeFile(FAILED_DOWNLOAD_MARK, `${Date.now()}\n${reason}`).catch(() => {})
    return { why: `download failed: ${reason}` }
  } finally {
    clearTimeout(timer)
  }
}

export function describeDatabase (db: ChosenDatabase): string {
  return `database: ${db.kind} (${db.reason})`
}
