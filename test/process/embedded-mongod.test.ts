// The embedded mongod as the choice of database starts it, with mongodb-memory-server faked (what
// it is asked is noted) and then real up to the point where a mongod would run.
import { chmod, readFile, stat, writeFile } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { chooseDatabase, EmbeddedMongodError } from '../../process/choose-database.js'
import { MONGOD_VERSION } from '../../process/embedded-mongod.js'
import { fakeMemoryServer } from '../helpers/fake-memory-server.js'

const ROOT = join(import.meta.dirname, '..', '..')
const where = async (path: string): Promise<'there' | 'gone'> => await stat(path).then(() => 'there', () => 'gone')

t.test('a mongod at hand: a one-member replica set on wiredTiger, test commands on, the pinned version', async (t) => {
  const { memoryServer, calls } = fakeMemoryServer({ binary: '/cache/mongod-8.0' })
  const db = await chooseDatabase({ env: {}, memoryServer, failureMark: join(t.testdir({}), 'mark') })
  t.equal(db.kind, 'mongodb-memory-server')
  t.equal(db.uri, 'mongodb://127.0.0.1:27999/?replicaSet=testset', 'the replica set\'s own URI')
  t.match(db.reason, `mongod ${MONGOD_VERSION} as a one-member replica set (already downloaded: /cache/mongod-8.0)`)
  t.same(calls.located, [MONGOD_VERSION], 'the pinned version is looked for')
  const dbPath = calls.created[0]?.instanceOpts?.[0]?.dbPath as string
  t.same(calls.created, [{
    binary: { version: MONGOD_VERSION, systemBinary: '/cache/mongod-8.0' },
    instanceOpts: [{ dbPath }],
    replSet: {
      count: 1, storageEngine: 'wiredTiger', args: ['--setParameter', 'enableTestCommands=1'], spawn: { detached: true }
    }
  }])
  t.equal(calls.started, 1)
  t.equal(await where(dbPath), 'there', 'a data directory of its own')
  await db.close()
  t.equal(calls.stopped, 1, 'closing the database stops the set')
  t.equal(await where(dbPath), 'gone', 'and removes its data')
})

t.test('MONGOMS_VERSION and MONGOMS_SYSTEM_BINARY, mongodb-memory-server\'s own variables, are followed', async (t) => {
  const { memoryServer, calls } = fakeMemoryServer({ binary: undefined })
  const db = await chooseDatabase({
    env: { MONGOMS_VERSION: '7.0.14', MONGOMS_SYSTEM_BINARY: '/usr/bin/mongod' },
    memoryServer,
    failureMark: join(t.testdir({}), 'mark')
  })
  t.teardown(db.close)
  t.match(calls.created[0], { binary: { version: '7.0.14', systemBinary: '/usr/bin/mongod' } })
  t.same(calls.located, [], 'the cache is not searched')
})

t.test('no mongod yet: it is downloaded once the site answers, then started', async (t) => {
  const site = http.createServer((_request, response) => { response.end() })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { site.close() })
  const env = { MONGOMS_DOWNLOAD_MIRROR: `http://127.0.0.1:${(site.address() as AddressInfo).port}` }
  const heard: string[] = []
  const { memoryServer, calls } = fakeMemoryServer({ binary: undefined, download: '/cache/downloaded/mongod' })
  const db = await chooseDatabase({
    env, memoryServer, failureMark: join(t.testdir({}), 'mark'), onProgress: (message) => heard.push(message)
  })
  t.teardown(db.close)
  t.same(calls.downloaded, [MONGOD_VERSION])
  t.match(heard, [
    /starting an embedded database/,
    new RegExp(`downloading mongod ${MONGOD_VERSION} from http://127\\.0\\.0\\.1:\\d+ ` +
      '\\(once; up to 120 s, then the offline stand-in\\)')
  ])
  t.match(calls.created[0], { binary: { systemBinary: '/cache/downloaded/mongod' } })
  t.equal(db.kind, 'mongodb-memory-server')
})

t.test('a mongod that does not start: the offline stand-in, saying why; ' +
  'the set\'s data directory is removed', async (t) => {
  const { memoryServer, calls } = fakeMemoryServer({
    binary: '/cache/mongod', startFails: 'Instance closed unexpectedly with code "14"'
  })
  const db = await chooseDatabase({ env: {}, memoryServer, failureMark: join(t.testdir({}), 'mark') })
  t.teardown(db.close)
  t.equal(db.kind, 'offline-mongodb')
  t.match(db.reason, `no MONGODB_URI and no mongod (mongod ${MONGOD_VERSION} did not start as a replica set ` +
    '(already downloaded: /cache/mongod): Instance closed unexpectedly with code "14")')
  t.equal(await where(calls.created[0]?.instanceOpts?.[0]?.dbPath as string), 'gone')
})

t.test('EMBEDDED_DATABASE=mongod: a failure stops the start with its reason, ' +
  'and a recent failed download is retried', async (t) => {
  const failureMark = join(t.testdir({}), 'mark')
  await writeFile(failureMark, `${Date.now()}\nno network a minute ago`)
  const { memoryServer, calls } = fakeMemoryServer({
    binary: '/cache/mongod', startFails: 'Instance closed unexpectedly with code "14"'
  })
  const error = await chooseDatabase({ env: { EMBEDDED_DATABASE: 'mongod' }, memoryServer, failureMark })
    .catch((e: unknown) => e)
  t.ok(error instanceof EmbeddedMongodError)
  t.match((error as Error).message,
    /^EMBEDDED_DATABASE=mongod, and no mongod replica set could be had: mongod \S+ did not start .*code "14"\. Unset EMBEDDED_DATABASE/)
  t.same(calls.located, [MONGOD_VERSION], 'looked for despite the mark')
})

t.test('EMBEDDED_DATABASE=stand-in: the stand-in, with nothing asked of mongodb-memory-server', async (t) => {
  const { memoryServer, calls } = fakeMemoryServer({ binary: '/cache/mongod' })
  const heard: string[] = []
  const db = await chooseDatabase({
    env: { EMBEDDED_DATABASE: 'stand-in' }, memoryServer, onProgress: (message) => heard.push(message)
  })
  t.teardown(db.close)
  t.equal(db.kind, 'offline-mongodb')
  t.equal(db.reason, 'no MONGODB_URI; EMBEDDED_DATABASE=stand-in')
  t.same(heard, ['no MONGODB_URI: starting an embedded database, the offline stand-in (EMBEDDED_DATABASE=stand-in)'])
  t.same(calls, { located: [], downloaded: [], created: [], started: 0, stopped: 0 })
})

t.test('the real mongodb-memory-server starts the binary it is given as a replica set member, ' +
  'and cleans up after it', async (t) => {
  // A "mongod" that says its version, notes its arguments and exits as a mongod that cannot start.
  const dir = t.testdir({})
  const binary = join(dir, 'mongod')
  await writeFile(binary, '#!/bin/sh\n' +
    `if [ "$1" = --version ]; then echo "db version v${MONGOD_VERSION}"; exit 0; fi\n` +
    `printf '%s\\n' "$@" > "${dir}/args"\ncut -d' ' -f5 /proc/$$/stat > "${dir}/group"\nexit 14\n`)
  await chmod(binary, 0o755)
  const db = await chooseDatabase({ env: { MONGOMS_SYSTEM_BINARY: binary }, failureMark: join(dir, 'mark') })
  t.teardown(db.close)
  t.equal(db.kind, 'offline-mongodb', 'the stand-in, since this mongod does not start')
  t.match(db.reason, /did not start as a replica set \(MONGOMS_SYSTEM_BINARY\): .*closed unexpectedly/)
  const args = (await readFile(join(dir, 'args'), 'utf8')).trim().split('\n')
  const option = (name: string): string | undefined => args[args.indexOf(name) + 1]
  t.match(option('--replSet'), /\S/, 'a replica set member')
  t.equal(option('--storageEngine'), 'wiredTiger')
  t.equal(option('--bind_ip'), '127.0.0.1', 'on loopback')
  t.equal(option('--setParameter'), 'enableTestCommands=1')
  // Field 5 of /proc/<pid>/stat is the process group (proc(5)); the second, the name, is in parentheses.
  const group = async (file: string): Promise<string> => {
    const stat = await readFile(file, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2] ?? ''
  }
  const mongodGroup = (await readFile(join(dir, 'group'), 'utf8')).trim()
  t.not(mongodGroup, await group('/proc/self/stat'), 'in a process group other than the service\'s: ' +
    'a Ctrl-C to the service\'s group does not stop it under the drain')
  const dbPath = option('--dbpath') as string
  t.equal(await where(dbPath), 'gone', `its data directory ${dbPath} is removed`)
})

t.test('npm ci downloads the version the service starts', async (t) => {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    config: { mongodbMemoryServer: { version: string } }
  }
  t.equal(pkg.config.mongodbMemoryServer.version, MONGOD_VERSION, 'package.json config.mongodbMemoryServer.version')
})
