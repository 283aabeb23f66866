// A TCP proxy between the service and its database that injects the faults of a cluster:
// resets, refusals, silence (blackhole, half-open connections), slow replies, and server
// error replies written as mongod writes them. Loopback only; every fault is switched off by `heal`.
import net from 'node:net'
import { encodeReply, MessageFramer, parseMessage } from '../../offline-mongodb/wire-protocol.js'

export interface ErrorReply { code: number, codeName: string, errmsg: string, errorLabels?: string[] }

export interface FaultProxy {
  uri: string
  port: number
  /** Open connections now. */
  connections: () => number
  /** Connections accepted since start. */
  accepted: () => number
  /** Resets every open connection (RST) and refuses new ones until healed. */
  outage: () => void
  /** Accepts connections but forwards nothing, either way; existing connections go silent too. */
  blackhole: () => void
  /** Existing connections go silent (the peer vanished without a FIN); new ones work. */
  halfOpen: () => void
  /** Holds each reply from the database this long. */
  slow: (ms: number) => void
  /** Answers these commands with this error, as mongod would, instead of forwarding them (the next `times` of them, when given). */
  failCommands: (names: string[], reply: ErrorReply, times?: number) => void
  heal: () => void
  close: () => Promise<void>
}

interface Link { client: net.Socket, server: net.Socket, silent: boolean }

export async function startFaultProxy (target: { host: string, port: number }): Promise<FaultProxy> {
  const links = new Set<Link>()
  let accepted = 0
  let refuse = false
  let silentNew = false
  let delayMs = 0
  let failing: { names: Set<string>, reply: ErrorReply, left: number } | undefined

  const server = net.createServer((client) => {
    accepted++
    if (refuse) {
      client.resetAndDestroy()
      return
    }
    const upstream = net.connect(target.port, target.host)
    const link: Link = { client, server: upstream, silent: silentNew }
    links.add(link)
    const drop = () => {
      links.delete(link)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', drop).on('close', drop)
    upstream.on('error', drop).on('close', drop)

    const framer = new MessageFramer()
    client.on('data', (chunk: Buffer) => {
      if (link.silent) return
      if (failing === undefined) {
        upstream.write(chunk)
        return
      }
      for (const frame of framer.push(chunk)) {
        const message = parseMessage(frame)
        const name = Object.keys(message.command)[0] ?? ''
        if (failing !== undefined && failing.names.has(name) && failing.left > 0) {
          failing.left--
          client.write(encodeReply(message, { ok: 0, ...failing.reply }))
        } else {
          upstream.write(frame)
        }
      }
    })
    upstream.on('data', (chunk: Buffer) => {
      if (link.silent) return
      if (delayMs > 0) setTimeout(() => { if (!link.silent) client.write(chunk) }, delayMs)
      else client.write(chunk)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port

  return {
    uri: `mongodb://127.0.0.1:${port}/?directConnection=true`,
    port,
    connections: () => links.size,
    accepted: () => accepted,
    outage: () => {
      refuse = true
      for (const link of links) {
        link.client.resetAndDestroy()
        link.server.destroy()
      }
    },
    blackhole: () => {
      silentNew = true
      for (const link of links) link.silent = true
    },
    halfOpen: () => {
      for (const link of links) link.silent = true
    },
    slow: (ms) => { delayMs = ms },
    failCommands: (names, reply, times = Infinity) => { failing = { names: new Set(names), reply, left: times } },
    heal: () => {
      refuse = false
      silentNew = false
      delayMs = 0
      failing = undefined
    },
    close: async () => {
      for (const link of links) {
        link.client.destroy()
        link.server.destroy()
      }
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
