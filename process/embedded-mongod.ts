// MongoDB's own mongod, through mongodb-memory-server, as a one-member replica set: change
// streams, and so the change feeds, exist on replica sets and sharded clusters only.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DryMongoBinary, MongoBinary, MongoMemoryReplSet } from 'mongodb-memory-server'

/**
 * 8.0: MongoDB's newest major release, the one supported longest on a developer's own machine
 * (8.2 and later are minor releases), and the newest of the versions CI runs the suite on.
 * package.json's `config.mongodbMemoryServer.version` names it too, so that `npm ci` downloads
 * this one; MONGOMS_VERSION, mongodb-memory-server's own variable, overrides both.
 */
export const MONGOD_VERSION = '8.0.24'

/** What is used of mongodb-memory-server: the package, or a stand-in for it (tests). */
export interface MemoryServerModule {
  MongoMemoryReplSet: new (
    options: ConstructorParameters<typeof MongoMemoryReplSet>[0]
  ) => Pick<MongoMemoryReplSet, 'start' | 'waitUntilRunning' | 'getUri' | 'stop'>
  DryMongoBinary: Pick<typeof DryMongoBinary, 'generateOptions' | 'locateBinary'>
  MongoBinary: Pick<typeof MongoBinary, 'getPath'>
}

export interface MongodOptions {
  env: NodeJS.ProcessEnv
  /** mongodb-memory-server itself unless given; imported only once a binary is looked for. */
  memoryServer?: MemoryServerModule
  /** How long a first download of mongod may take, once its site answers. */
  downloadTimeoutMs?: number
  /** How long the download site has to answer at all: a machine without internet learns it this soon. */
  probeTimeoutMs?: number
  onProgress?: (message: string) => void
  /** Where a failed download is remembered. */
  failureMark?: string
  /** EMBEDDED_DATABASE=mongod: no stand-in after a failure, and a failed download is retried at once. */
  insist?: boolean
}

export interface EmbeddedMongod { uri: string, why: string, close: () => Promise<void> }

/** A failed download is remembered for an hour, so that each test process does not retry it. */
const FAILED_DOWNLOAD_MARK = join(tmpdir(), 'listing-api-mongod-download-failed')
const RETRY_DOWNLOAD_AFTER_MS = 60 * 60 * 1000
/** Where mongodb-memory-server downloads from, unless its own variables say otherwise. */
const DOWNLOAD_SITE = 'https://fastdl.mongodb.org'

const lastLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).trim().split('\n').pop()?.trim() ?? 'unknown error'

/** The one-member replica set, running; or why there is none. */
export async function startEmbeddedMongod (options: MongodOptions): Promise<EmbeddedMongod | { why: string }> {
  const version = options.env.MONGOMS_VERSION || MONGOD_VERSION
  const found = await findMongod(options, version)
  if (!('path' in found)) return found
  // The data directory is ours to remove: mongodb-memory-server loses track of the one it makes
  // when mongod fails to start (MongoMemoryServer._startUpInstance keeps it only once mongod runs).
  const dbPath = await mkdtemp(join(tmpdir(), 'listing-api-mongod-'))
  const removeData = async (): Promise<void> => { await rm(dbPath, { recursive: true, force: true }) }
  const replSet = new found.memoryServer.MongoMemoryReplSet({
    binary: { version, systemBinary: found.path },
    instanceOpts: [{ dbPath }],
    // getUri() names the member 127.0.0.1:<port> with `replicaSet=`, and so does the set's
    // config: the driver keeps to that address once it reads the member's hello (the Server
    // Discovery and Monitoring spec, "updateRSFromPrimary"). The maxTimeAlwaysTimeOut fail point
    // of the timeout tests needs the test commands.
    // mongod in a process group of its own, as the stand-in's (choose-database.ts): a terminal's
    // Ctrl-C would stop it under the service's drain. Should the service die, the library's killer
    // process stops it.
    replSet: {
      count: 1, storageEngine: 'wiredTiger', args: ['--setParameter', 'enableTestCommands=1'], spawn: { detached: true }
    }
  })
  try {
    await replSet.start()
    await replSet.waitUntilRunning()
  } catch (error) {
    await removeData()
    return { why: `mongod ${version} did not start as a replica set (${found.why}): ${lastLine(error)}` }
  }
  return {
    uri: replSet.getUri(),
    why: `mongod ${version} as a one-member replica set (${found.why})`,
    close: async () => {
      await replSet.stop()
      await removeData()
    }
  }
}

type Found = { path: string, memoryServer: MemoryServerModule, why: string } | { why: string }

async function findMongod (options: MongodOptions, version: string): Promise<Found> {
  const {
    env, downloadTimeoutMs: timeoutMs = 120_000, probeTimeoutMs = 2000, onProgress, failureMark = FAILED_DOWNLOAD_MARK
  } = options
  const system = env.MONGOMS_SYSTEM_BINARY
  // Within the hour after a failed download nothing is looked for, not even a binary put in
  // mongodb-memory-server's cache meanwhile (MONGOMS_SYSTEM_BINARY names one, or delete the
  // mark): loading mongodb-memory-server just to look would slow the start of every test process.
  if ((system === undefined || system === '') && options.insist !== true) {
    const [at, ...message] = (await readFile(failureMark, 'utf8').catch(() => '')).split('\n')
    if (Date.now() - Number(at) < RETRY_DOWNLOAD_AFTER_MS) {
      return { why: `download failed recently: ${message.join(' ')}` }
    }
  }
  let memoryServer: MemoryServerModule
  try {
    memoryServer = options.memoryServer ?? await import('mongodb-memory-server')
  } catch {
    return { why: 'mongodb-memory-server is not installed' }
  }
  if (system !== undefined && system !== '') return { path: system, memoryServer, why: 'MONGOMS_SYSTEM_BINARY' }
  const located = await memoryServer.DryMongoBinary.locateBinary(
    await memoryServer.DryMongoBinary.generateOptions({ version })
  )
  if (located !== undefined) return { path: located, memoryServer, why: `already downloaded: ${located}` }

  const failed = async (reason: string): Promise<Found> => {
    await writeFile(failureMark, `${Date.now()}\n${reason}`).catch(() => {})
    return { why: `download failed: ${reason}` }
  }
  // mongodb-memory-server retries a site it cannot reach for several seconds, silently: the
  // site is asked first, briefly, so that a machine without internet starts at once.
  const site = downloadSite(env)
  const unreachable = await probe(site, probeTimeoutMs, env)
  if (unreachable !== undefined) return await failed(`${site} did not answer in ${probeTimeoutMs} ms (${unreachable})`)
  const then = options.insist === true ? '' : ', then the offline stand-in'
  onProgress?.(`downloading mongod ${version} from ${site} (once; up to ${Math.round(timeoutMs / 1000)} s${then})`)
  let timer: NodeJS.Timeout | undefined
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs)
      timer.unref()
    })
    const path = await Promise.race([memoryServer.MongoBinary.getPath({ version }), timeout])
    return { path, memoryServer, why: `downloaded to ${path}` }
  } catch (error) {
    return await failed(lastLine(error))
  } finally {
    clearTimeout(timer)
  }
}

/** The origin mongodb-memory-server downloads from (its MONGOMS_DOWNLOAD_URL or _MIRROR, else MongoDB's). */
function downloadSite (env: NodeJS.ProcessEnv): string {
  try {
    return new URL(env.MONGOMS_DOWNLOAD_URL ?? env.MONGOMS_DOWNLOAD_MIRROR ?? DOWNLOAD_SITE).origin
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
  if (['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'].some((name) => (env[name] ?? '') !== '')) {
    return undefined
  }
  try {
    const response = await fetch(site, { method: 'HEAD', redirect: 'manual', signal: AbortSignal.timeout(ms) })
    await response.body?.cancel()
    return undefined
  } catch (error) {
    const cause = (error as { cause?: { code?: string, message?: string } }).cause
    return cause?.code ?? cause?.message ?? (error as Error).message
  }
}
