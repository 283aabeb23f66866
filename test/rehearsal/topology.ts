// The production topology on one machine, with real parts: Debian's nginx terminating TLS (a
// throw-away certificate made with openssl), in front of two service processes started with the
// production environment and the image's node flags, a JWKS server, and the database behind the fault proxy.
// Every address is on loopback; nginx connects to the replicas from 127.0.0.2, the only address
// the replicas trust (TRUST_PROXY), and clients connect from addresses of their own.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
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

const ROOT = path.join(import.meta.dirname, '..', '..')
export const NGINX_ADDRESS = '127.0.0.2'
export const SERVER_NAME = 'listing.test'
export const CORS_ORIGIN = 'https://planner.example.test'
export const RATE_LIMIT_PER_MINUTE = 40
export const SHUTDOWN_DELAY_MS = 2000
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((file) => {
  try { execFileSync(file, ['-v'], { stdio: 'ignore' }); return true } catch { return false }
})

export const nginxMissing = NGINX === undefined ? 'Debian\'s nginx is not installed (.ci/run installs it)' : false

export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  json: () => any
}

export interface Topology {
  /** https://listing.test:<port>, resolved to nginx on 127.0.0.1. */
  ingress: string
  replicas: ServiceProcess[]
  replicaPorts: number[]
  proxy: FaultProxy
  jwks: JwksServer
  signingKey: TestKey
  /** A GET through nginx (or to any URL) from `from` (a loopback address), with a bearer token unless `token: null`. */
  get: (
    url: string, options?: { from?: string, token?: string | null, headers?: Record<string, string>, method?: string }
  ) => Promise<Answer>
  /** The same GET, answered as a stream: the response as soon as its head arrives. */
  open: (
    url: string, options?: { from?: string, token?: string | null, headers?: Record<string, string> }
  ) => Promise<IncomingMessage>
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
 * process group is gone within 10 s; else kills the group and throws, failing the test.
 */
async function stopNginx (nginx: ChildProcess): Promise<void> {
  const group = nginx.pid
  if (group === undefined) return
  if (nginx.exitCode === null && nginx.signalCode === null) nginx.kill('SIGQUIT')
  for (let i = 0; i < 100 && groupMembers(group).length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const left = groupMembers(group)
  if (left.length === 0) return
  try { process.kill(-group, 'SIGKILL') } catch {}
  throw new Error(`nginx left processes ${left.join(', ')} running after SIGQUIT`)
}

/** The nginx configuration users copy (deploy/nginx/), with this topology's values. */
function renderTemplate (values: Record<string, string>): string {
  const template = readFileSync(path.join(ROOT, 'deploy', 'nginx', 'listing-api.conf.template'), 'utf8')
  return template.replace(/\$\{([A-Z0-9_]+)\}/g, (whole, name: string) => values[name] ?? whole)
}

export async function startTopology (t: Test): Promise<Topology> {
  const dir = mkdtempSync(path.join(tmpdir(), 'listing-rehearsal-'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=${SERVER_NAME}`, '-addext', `subjectAltName=DNS:${SERVER_NAME}`, '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' })
  const ca = readFileSync(path.join(dir, 'cert.pem'))

  const proxy = await proxiedDatabase(t)
  const MONGODB_DB = uniqueDatabaseName('rehearsal')
  await seedDemoData(`mongodb://127.0.0.1:${proxy.port}/?directConnection=true`, MONGODB_DB)
  const signingKey = makeKey('rehearsal-1', 'ES256')
  const jwks = await startJwksServer([signingKey])
  t.teardown(jwks.close)

  const replicaPorts = [await freePort(), await freePort()]
  const environment = (port: number): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      MONGODB_URI: proxy.uri,
      MONGODB_DB,
      CURSOR_SECRET: 'rehearsal-cursor-secret-of-at-least-32-bytes',
      AUTH_MODE: 'jwt',
      JWT_JWKS_URI: jwks.uri,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      TRUST_PROXY: NGINX_ADDRESS,
      CORS_ORIGINS: CORS_ORIGIN,
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      LOG_LEVEL: 'info'
    }
    return env
  }
  // A replica listens at once and opens its pool meanwhile: it is started when /ready says so.
  const startReplica = async (port: number): Promise<ServiceProcess> => {
    // server.ts as `npm start` runs it, with the image's node flags (test/dockerfile.test.ts runs the built output).
    // Without V8's coverage counters, also under `npm run test:coverage`: the rehearsal measures
    // request rates and latencies, which would be the counters' (the same code is covered elsewhere).
    const replica = await listening(spawn(NODE, nodeArgs([...productionFlags(), '--import', 'tsx', 'server.ts'], { coverage: false }), { cwd: ROOT, env: environment(port), stdio: ['ignore', 'pipe', 'pipe'] }))
    await untilReady(replica.url)
    return replica
  }
  const replicas = await Promise.all(replicaPorts.map(startReplica))
  t.teardown(() => { for (const replica of replicas) replica.child.kill('SIGKILL') })

  const ingressPort = await freePort()
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
  // A process group of its own (detached), so that its workers can be found and none outlives the test.
  const nginx: ChildProcess = spawn(NGINX as string, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off; user root;'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  let nginxErrors = ''
  nginx.stderr?.setEncoding('utf8').on('data', (chunk: string) => { nginxErrors += chunk })
  t.teardown(async () => { await stopNginx(nginx) })

  const agents = new Map<string, https.Agent>()
  const agentFrom = (from: string): https.Agent => {
    let agent = agents.get(from)
    if (agent === undefined) {
      agent = new https.Agent({ ca, keepAlive: true, maxSockets: 64, localAddress: from, lookup: (_host, options, callback) => (options as { all?: boolean }).all === true ? callback(null, [{ address: '127.0.0.1', family: 4 }] as never, 4) : callback(null, '127.0.0.1', 4) })
      agents.set(from, agent)
    }
    return agent
  }
  t.teardown(() => { for (const agent of agents.values()) agent.destroy() })
  const token = (claims: Record<string, unknown> = {}): string => mint(signingKey, { projects: '*', ...claims })
  const defaultToken = token()

  const get: Topology['get'] = async (url, { from = '127.0.0.3', token: bearer = defaultToken, headers = {}, method = 'GET' } = {}) => await new Promise((resolve, reject) => {
    const target = new URL(url)
    const all = { ...headers, ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }) }
    const options = { method, headers: all, timeout: 30_000 }
    const onResponse = (res: IncomingMessage): void => {
      let body = ''
      res.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) })
      })
    }
    // Through nginx over TLS, or straight to a replica over plain HTTP.
    const request = target.protocol === 'https:'
      ? https.request(target, { ...options, agent: agentFrom(from), servername: target.hostname }, onResponse)
      : http.request(target, { ...options, localAddress: from }, onResponse)
    request.on('error', reject).on('timeout', () => request.destroy(new Error('timeout'))).end()
  })

  const open: Topology['open'] = async (url, { from = '127.0.0.3', token: bearer = defaultToken, headers = {} } = {}) => await new Promise((resolve, reject) => {
    const target = new URL(url)
    const all = { ...headers, ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }) }
    const request = https.request(target, { headers: all, agent: agentFrom(from), servername: target.hostname }, resolve)
    request.on('error', reject).end()
  })

  const ingress = `https://${SERVER_NAME}:${ingressPort}`
  // nginx is up once it answers through TLS.
  for (let i = 0; ; i++) {
    try {
      if ((await get(`${ingress}/health`, { token: null })).status === 200) break
    } catch (error) {
      if (i > 50) throw new Error(`nginx did not come up: ${String(error)}\n${nginxErrors}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  const requestsTo = (port: number): number => {
    let log = ''
    try { log = readFileSync(path.join(dir, 'upstream.log'), 'utf8') } catch {}
    return log.split(`127.0.0.1:${port}`).length - 1
  }

  const restart = async (index: number): Promise<number | null> => {
    const old = replicas[index] as ServiceProcess
    old.child.kill('SIGTERM')
    const code = await old.exited
    replicas[index] = await startReplica(replicaPorts[index] as number)
    return code
  }

  return { ingress, replicas, replicaPorts, proxy, jwks, signingKey, get, open, databaseUri: `mongodb://127.0.0.1:${proxy.port}/?directConnection=true`, databaseName: MONGODB_DB, restart, token, requestsTo, nginxLog: () => { try { return readFileSync(path.join(dir, 'error.log'), 'utf8') } catch { return nginxErrors } } }
}
