// The rehearsal's clients: connections from loopback addresses of their own, through nginx or
// straight to a replica, and the load they put on the topology (a steady rate, or bursts).
import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import type { Test } from 'tap'

/** Every host name is nginx's address, 127.0.0.1 (a list of one when `all` asks for a list). */
const lookupNginx: LookupFunction = (_host, options, callback) => (options as { all?: boolean }).all === true
  ? callback(null, [{ address: '127.0.0.1', family: 4 }] as never, 4)
  : callback(null, '127.0.0.1', 4)

/** The clients' agents, one per loopback address `from`, trusting `ca`, destroyed when `t` ends. */
export function clientAgents (t: Test, ca: Buffer): (from: string) => https.Agent {
  const agents = new Map<string, https.Agent>()
  const agentFrom = (from: string): https.Agent => {
    let agent = agents.get(from)
    if (agent === undefined) {
      agent = new https.Agent({ ca, keepAlive: true, maxSockets: 64, localAddress: from, lookup: lookupNginx })
      agents.set(from, agent)
    }
    return agent
  }
  t.teardown(() => { for (const agent of agents.values()) agent.destroy() })
  return agentFrom
}

export interface Answer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  json: () => any
}

export interface Requests {
  /** A GET through nginx (or to any URL) from `from` (a loopback address), with a bearer token unless `token: null`. */
  get: (
    url: string, options?: { from?: string, token?: string | null, headers?: Record<string, string>, method?: string }
  ) => Promise<Answer>
  /** The same GET, answered as a stream: the response as soon as its head arrives. */
  open: (
    url: string, options?: { from?: string, token?: string | null, headers?: Record<string, string> }
  ) => Promise<IncomingMessage>
}

/** The topology's `get` and `open`, from the clients' agents, with `defaultToken` unless told otherwise. */
export function clientRequests (agentFrom: (from: string) => https.Agent, defaultToken: string): Requests {
  const get: Requests['get'] = async (
    url, { from = '127.0.0.3', token: bearer = defaultToken, headers = {}, method = 'GET' } = {}
  ) => await new Promise((resolve, reject) => {
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

  const open: Requests['open'] = async (
    url, { from = '127.0.0.3', token: bearer = defaultToken, headers = {} } = {}
  ) => await new Promise((resolve, reject) => {
    const target = new URL(url)
    const all = { ...headers, ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }) }
    const options = { headers: all, agent: agentFrom(from), servername: target.hostname }
    const request = https.request(target, options, resolve)
    request.on('error', reject).end()
  })
  return { get, open }
}

/** The `p` percentile of `values` (0 < p ≤ 1), by nearest rank. */
export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0
}

/** What the load needs of the topology (topology.ts): its ingress, and requests to it. */
interface Target { ingress: string, get: Requests['get'] }

export interface Load {
  /** Requests answered so far. */
  answered: () => number
  /**
   * Stops sending, and waits for the answers: how many were sent in how many `seconds` (from the
   * start to the stop), the failures, the latencies, and `lagMs`, the most a request was started
   * after its turn (request n is due (n + 1) / perSecond s after the start).
   */
  stop: () => Promise<{ sent: number, failures: string[], seconds: number, latencies: number[], lagMs: number }>
}

/** Requests at `perSecond` through nginx, each on its own schedule (not waiting for the last), until stopped. */
export function steadyLoad (topology: Target, urls: string[], perSecond: number, tokens: string[]): Load {
  const failures: string[] = []
  const latencies: number[] = []
  const pending = new Set<Promise<void>>()
  let sent = 0
  let lagMs = 0
  const started = Date.now()
  // Every 5 ms, whatever is due: a late tick sends what it owes at once, and says how late it was.
  const timer = setInterval(() => {
    const elapsed = Date.now() - started
    const due = Math.floor(elapsed * perSecond / 1000) - sent
    if (due > 0) lagMs = Math.max(lagMs, elapsed - (sent + 1) * 1000 / perSecond)
    for (let i = 0; i < due; i++) {
      const n = sent++
      const url = urls[n % urls.length] as string
      const begun = Date.now()
      const request = topology.get(`${topology.ingress}${url}`, { token: tokens[n % tokens.length] as string }).then(
        (answer) => {
          latencies.push(Date.now() - begun)
          if (answer.status !== 200) failures.push(`${answer.status} ${answer.body.slice(0, 120)}`)
        },
        (error: Error) => { failures.push(`network: ${error.message}`) }
      ).finally(() => { pending.delete(request) })
      pending.add(request)
    }
  }, 5)
  return {
    answered: () => latencies.length,
    stop: async () => {
      clearInterval(timer)
      const elapsed = Date.now() - started
      // A request whose turn came before the stop and that no tick sent is late too.
      lagMs = Math.max(lagMs, elapsed - (sent + 1) * 1000 / perSecond)
      const seconds = elapsed / 1000
      await Promise.all(pending)
      return { sent, failures, seconds, latencies, lagMs: Math.round(lagMs) }
    }
  }
}

/** `concurrency` requests through nginx at once: each one's status, time and problem code. */
export async function burst (
  topology: Target, urls: string[], concurrency: number, tokens: string[]
): Promise<Array<{ status: number, ms: number, code?: string }>> {
  return await Promise.all(Array.from({ length: concurrency }, async (_, i) => {
    const started = Date.now()
    const answer = await topology.get(`${topology.ingress}${urls[i % urls.length] as string}`,
      { token: tokens[i % tokens.length] as string })
    return {
      status: answer.status, ms: Date.now() - started, ...(answer.status === 200 ? {} : { code: answer.json().code })
    }
  }))
}
