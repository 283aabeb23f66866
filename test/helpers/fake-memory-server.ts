import type { MemoryServerModule } from '../../process/embedded-mongod.js'

export type ReplSetOptions = ConstructorParameters<MemoryServerModule['MongoMemoryReplSet']>[0]

export interface MemoryServerCalls {
  /** The versions looked for in mongodb-memory-server's cache, and downloaded. */
  located: string[]
  downloaded: string[]
  /** The options of each replica set made, and what was done to them. */
  created: ReplSetOptions[]
  started: number
  stopped: number
}

export interface FakeMemoryServerOptions {
  /** What the cache holds (undefined: nothing). */
  binary?: string
  /** Where a download puts mongod (undefined: the download fails). */
  download?: string
  /** Why the replica set does not start (undefined: it starts). */
  startFails?: string
}

/** mongodb-memory-server as the choice of database uses it, without a mongod: what it is asked is noted. */
export function fakeMemoryServer (
  { binary, download, startFails }: FakeMemoryServerOptions
): { memoryServer: MemoryServerModule, calls: MemoryServerCalls } {
  const calls: MemoryServerCalls = { located: [], downloaded: [], created: [], started: 0, stopped: 0 }
  class MongoMemoryReplSet {
    constructor (options: ReplSetOptions) { calls.created.push(options) }
    async start (): Promise<void> {
      calls.started++
      if (startFails !== undefined) throw new Error(startFails)
    }

    async waitUntilRunning (): Promise<void> {}
    getUri (): string { return 'mongodb://127.0.0.1:27999/?replicaSet=testset' }
    async stop (): Promise<boolean> {
      calls.stopped++
      return true
    }
  }
  const memoryServer: MemoryServerModule = {
    MongoMemoryReplSet,
    DryMongoBinary: {
      generateOptions: async (options) => ({
        version: options?.version ?? '',
        downloadDir: '',
        os: { os: 'linux' },
        platform: 'linux',
        arch: 'x64',
        systemBinary: ''
      }),
      locateBinary: async (options) => {
        calls.located.push(options.version)
        return binary
      }
    },
    MongoBinary: {
      getPath: async (options) => {
        calls.downloaded.push(options?.version ?? '')
        if (download === undefined) throw new Error('MongoBinaryDownload: the archive could not be fetched')
        return download
      }
    }
  }
  return { memoryServer, calls }
}
