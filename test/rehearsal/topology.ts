// The production topology on one machine, with real parts: Debian's nginx terminating TLS (a
// throw-away certificate made with openssl), in front of two service processes started with the
// production environment and the image's node flags, a JWKS server, and the database behind the fault proxy.
// Every address is on loopback; nginx connects to the replicas from 127.0.0.2, the only address
// the replicas trust (TRUST_PROXY), and clients connect from addresses of their own.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import { seedDemoData } from '../../demo-data/seed.js'
import { uniqueDatabaseName } from '../helpers/database.js'
import { AUDIENCE, ISSUER, makeKey, mint, startJwksServer, type JwksServer, type TestKey } from '../helpers/tokens.js'
import { proxiedDatabase } from '../faults/fault-app.js'
import type { FaultProxy } from '../faults/fault-proxy.js'
import { freePort, listening, productionFlags, untilReady, type ServiceProcess } from '../faults/service-process.js'
import { NODE, nodeArgs } from '../helpers/node-child.js'
import { until } from '../helpers/until.js'
import { clientAgents, clientRequests, type Requests } from './clients.js'

const ROOT = path.join(import.meta.dirname, '..', '..')
export const NGINX_ADDRESS = '127.0.0.2'
export const SERVER_NAME = 'listing.test'
export const CORS_ORIGIN = 'https://planner.example.test'
export const RATE_LIMIT_PER_MINUTE = 40
export const SHUTDOWN_DELAY_MS = 2000
/**
 * How long nginx is given to answer through TLS once started, and to be gone after SIGQUIT (its
 * workers finish the requests they hold: the tests' are over by then). Each takes well under a
 * second; ten leave room for a machine busy with the suite's other files.
 */
const NGINX_START_MS = 10_000
const NGINX_STOP_MS = 10_000
/** How long a replica has to say it is ready (/ready 200): the default of untilReady, as for the other services. */
const REPLICA_READY_MS = 15_000
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((file) => {
  try { execFileSync(file, ['-v'], { stdio: 'ignore' }); return true } catch { return false }
})

export const nginxMissing = NGINX === undefined ? 'Debian\'s nginx is not installed (.ci/run installs it)' : false

export interface Topology {
  /** https://listing.test:<port>, resolved to nginx on 127.0.0.1. */
  ingress: string
  replicas: ServiceProcess[]
  replicaPorts: number[]
  proxy: FaultProxy
  jwks: JwksServer
  signingKey: TestKey
  get: Requests['get']
  open: Requests['open']
  /** A client of the database the replicas serve (writes for the feeds). */
  databaseUri: string
  databaseName: string
  /** SIGTERM to a replica, its exit awaited (the code returned), and a new one on the same port. */
  restart: (index: number) => Promise<number | null>
  token: (claims?: Record<string, unknown>) => string
  nginxLog: () => string
  /** How many requests nginx has sent to the replica on `port` (its access log of upstream addresses). */
  requestsTo: (port: number) => number
}

/** The processes of process group `group` (from /proc). */
export function groupMembers (group: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // pid (comm) state ppid pgrp …: the fields after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === group && fields[0] !== 'Z') members.push(Number(entry))
    } catch {}
  }
  return members
}

/**
 * Stops nginx as its manual says (SIGQUIT: workers finish, then exit), and checks that its whole
 * process group is gone within NGINX_STOP_MS; else kills the group and throws, failing the test.
 */
async function stopNginx (nginx: ChildProcess): Promise<void> {
  const group = nginx.pid
  if (group === undefined) return
  if (nginx.exitCode === null && nginx.signalCode === null) nginx.kill('SIGQUIT')
  if (await until(() => groupMembers(group).length === 0, NGINX_STOP_MS, 100)) return
  const left = groupMembers(group)
  if (left.length === 0) return
  try { process.kill(-group, 'SIGKILL') } catch {}
  throw new Error(`nginx left processes ${left.join(', ')} running ${NGINX_STOP_MS} ms after SIGQUIT`)
}

/** The nginx configuration users copy (deploy/nginx/), with this topology's values. */
function renderTemplate (values: Record<string, string>): string {
  const template = readFileSync(path.join(ROOT, 'deploy', 'nginx', 'listing-api.conf.template'), 'utf8')
  return template.replace(/\$\{([A-Z0-9_]+)\}/g, (whole, name: string) => values[name] ?? whole)
}

/** A throw-away certificate for SERVER_NAME in `dir` (cert.pem, key.pem): the one the clients trust. */
function makeCertificate (dir: string): Buffer {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=${SERVER_NAME}`, '-addext', `subjectAltName=DNS:${SERVER_NAME}`,
    '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')
  ], { stdio: 'ignore' })
  return readFileSync(path.join(dir, 'cert.pem'))
}

/** What the replicas share besides the limits: the database (through the fault proxy) and the JWKS server. */
interface ReplicaSettings {
  databaseUri: string
  databaseName: string
  jwksUri: string
}

/** A replica's environment: production, on `port`, trusting nginx alone. */
function replicaEnvironment (port: number, { databaseUri, databaseName, jwksUri }: ReplicaSettings): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    MONGODB_URI: databaseUri,
    MONGODB_DB: databaseName,
    CURSOR_SECRET: 'rehearsal-cursor-secret-of-at-least-32-bytes',
    AUTH_MODE: 'jwt',
    JWT_JWKS_URI: jwksUri,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
    TRUST_PROXY: NGINX_ADDRESS,
    CORS_ORIGINS: CORS_ORIGIN,
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
    SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
    LOG_LEVEL: 'info'
  }
}

/** A replica listens at once and opens its pool meanwhile: it is started when /ready says so. */
async function startReplica (environment: NodeJS.ProcessEnv): Promise<ServiceProcess> {
  // server.ts as `npm start` runs it, with the image's node flags (test/dockerfile.test.ts runs the built output).
  // Without V8's coverage counters, also under `npm run test:coverage`: the rehearsal measures
  // request rates and latencies, which would be the counters' (the same code is covered elsewhere).
  const args = nodeArgs([...productionFlags(), '--import', 'tsx', 'server.ts'], { coverage: false })
  const replica = await listening(spawn(NODE, args, { cwd: ROOT, env: environment, stdio: ['ignore', 'pipe', 'pipe'] }))
  if (await untilReady(replica.url, REPLICA_READY_MS) === Infinity) {
    replica.child.kill('SIGKILL')
    throw new Error(`the replica at ${replica.url} was not ready within ${REPLICA_READY_MS} ms:\n` +
      replica.lines.join('\n'))
  }
  return replica
}

/** The server block users copy, for the two replicas, and the nginx.conf around it, both in `dir`. */
function writeNginxConfiguration (dir: string, ingressPort: number, replicaPorts: number[]): void {
  writeFileSync(path.join(dir, 'listing-api.conf'), renderTemplate({
    LISTEN: `127.0.0.1:${ingressPort}`,
    SERVER_NAME,
    TLS_CERTIFICATE: path.join(dir, 'cert.pem'),
    TLS_CERTIFICATE_KEY: path.join(dir, 'key.pem'),
    LISTING_API_1: `127.0.0.1:${replicaPorts[0] as number}`,
    LISTING_API_2: `127.0.0.1:${replicaPorts[1] as number}`
  }))
  // What a cluster's nginx has around the server block: here, a process of the test's own.
  writeFileSync(path.join(dir, 'nginx.conf'), `
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  # Which replica each request went to: the test waits for a restarted one to be in rotation again.
  log_format upstream '$upstream_addr';
  access_log ${dir}/upstream.log upstream;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # The replicas trust this address alone; clients on loopback connect from others.
  proxy_bind ${NGINX_ADDRESS};
  include ${dir}/listing-api.conf;
}
`)
}

/** nginx on the configuration in `dir`, stopped when `t` ends: what it has written to stderr so far. */
function startNginx (t: Test, dir: string): () => string {
  // A process group of its own (detached), so that its workers can be found and none outlives the test.
  const args = ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off; user root;']
  const nginx: ChildProcess = spawn(NGINX as string, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  let nginxErrors = ''
  nginx.stderr?.setEncoding('utf8').on('data', (chunk: string) => { nginxErrors += chunk })
  t.teardown(async () => { await stopNginx(nginx) })
  return () => nginxErrors
}

/**
 * nginx is up once it answers 200 through TLS, asked every 100 ms; if it has not within
 * NGINX_START_MS, the error says why: its last answer or error, and its stderr.
 */
async function untilNginxAnswers (get: Topology['get'], ingress: string, nginxErrors: () => string): Promise<void> {
  let last = 'no answer'
  const answers = async (): Promise<boolean> => {
    try {
      const { status, body } = await get(`${ingress}/health`, { token: null })
      last = `${status} ${body.slice(0, 200)}`
      return status === 200
    } catch (error) {
      last = String(error)
      return false
    }
  }
  if (await until(answers, NGINX_START_MS, 100)) return
  throw new Error(`nginx did not answer 200 within ${NGINX_START_MS} ms (last: ${last})\n${nginxErrors()}`)
}

/** How many requests nginx has sent to the replica on `port` (its access log in `dir`, of upstream addresses). */
function requestsInLog (dir: string, port: number): number {
  let log = ''
  try { log = readFileSync(path.join(dir, 'upstream.log'), 'utf8') } catch {}
  return log.split(`127.0.0.1:${port}`).length - 1
}

/** nginx's error log in `dir`, or what it wrote to stderr if there is none. */
function nginxLog (dir: string, nginxErrors: () => string): string {
  try { return readFileSync(path.join(dir, 'error.log'), 'utf8') } catch { return nginxErrors() }
}

/** The database, the JWKS server, two replicas and nginx in front of them, all stopped when `t` ends. */
export async function startTopology (t: Test): Promise<Topology> {
  const dir = mkdtempSync(path.join(tmpdir(), 'listing-rehearsal-'))
  const ca = makeCertificate(dir)

  const proxy = await proxiedDatabase(t)
  const databaseName = uniqueDatabaseName('rehearsal')
  const databaseUri = `mongodb://127.0.0.1:${proxy.port}/?directConnection=true`
  await seedDemoData(databaseUri, databaseName)
  const signingKey = makeKey('rehearsal-1', 'ES256')
  const jwks = await startJwksServer([signingKey])
  t.teardown(jwks.close)

  const replicaPorts = [await freePort(), await freePort()]
  const settings: ReplicaSettings = { databaseUri: proxy.uri, databaseName, jwksUri: jwks.uri }
  /** A replica on `port`, at the first start and at each restart. */
  const startReplicaOn = async (port: number): Promise<ServiceProcess> =>
    await startReplica(replicaEnvironment(port, settings))
  const replicas = await Promise.all(replicaPorts.map(startReplicaOn))
  t.teardown(() => { for (const replica of replicas) replica.child.kill('SIGKILL') })

  const ingressPort = await freePort()
  writeNginxConfiguration(dir, ingressPort, replicaPorts)
  const nginxErrors = startNginx(t, dir)

  const agentFrom = clientAgents(t, ca)
  const token = (claims: Record<string, unknown> = {}): string => mint(signingKey, { projects: '*', ...claims })
  const { get, open } = clientRequests(agentFrom, token())

  const ingress = `https://${SERVER_NAME}:${ingressPort}`
  await untilNginxAnswers(get, ingress, nginxErrors)

  const restart = async (index: number): Promise<number | null> => {
    const old = replicas[index] as ServiceProcess
    old.child.kill('SIGTERM')
    const code = await old.exited
    replicas[index] = await startReplicaOn(replicaPorts[index] as number)
    return code
  }

  return {
    ingress,
    replicas,
    replicaPorts,
    proxy,
    jwks,
    signingKey,
    get,
    open,
    databaseUri,
    databaseName,
    restart,
    token,
    requestsTo: (port) => requestsInLog(dir, port),
    nginxLog: () => nginxLog(dir, nginxErrors)
  }
}
