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
  /** Connections refused (reset as they were accepted) since start: each is an attempt the outage turned away. */
  refused: () => number
  /** Replies from the database that slow() holds now, not yet forwarded. */
  delayed: () => number
  /** Resets every open connection (RST) and refuses new ones until healed. */
  outage: () => void
  /** Accepts connections but forwards nothing, either way; existing connections go silent too. */
  blackhole: () => void
  /** Existing connections go silent (the peer vanished without a FIN); new ones work. */
  halfOpen: () => void
  /** Holds each reply from the database this long. */
  slow: (ms: number) => void
  /**
   * Answers these commands with this error, as mongod would, instead
   * of forwarding them (the next `times` of them, when given).
   */
  failCommands: (names: string[], reply: ErrorReply, times?: number) => void
  /**
   * Forwards the next command that `matches` at once, but holds the database's reply to it
   * until `release` is called: a read that ran on the server before what happens meanwhile.
   */
  holdReply: (matches: (command: Record<string, unknown>) => boolean) => HeldReply
  /**
   * Hands a copy of the database's reply to the next command that `matches` (its whole frame,
   * header included) to `damage` in place, then forwards it: a reply damaged on the way.
   */
  rewriteReply: (matches: (command: Record<string, unknown>) => boolean, damage: (frame: Buffer) => void) => void
  heal: () => void
  close: () => Promise<void>
}

/** Where an OP_MSG reply's document starts: after the header's four int32s, the flags and the section's kind byte. */
export const REPLY_DOCUMENT_AT = 16 + 4 + 1

export interface HeldReply {
  /** Resolves when the database's reply has come and is held. */
  held: Promise<void>
  release: () => void
}

interface Link {
  client: net.Socket
  server: net.Socket
  silent: boolean
  heldRequest?: number
  upstreamFramer?: MessageFramer
}
interface Holding {
  matches: (command: Record<string, unknown>) => boolean
  link?: Link
  reply?: Buffer
  released: boolean
  onHeld: () => void
  damage?: (frame: Buffer) => void
}

export async function startFaultProxy (target: { host: string, port: number }): Promise<FaultProxy> {
  const links = new Set<Link>()
  let accepted = 0
  let refused = 0
  let delayed = 0
  let refuse = false
  let silentNew = false
  let delayMs = 0
  let failing: { names: Set<string>, reply: ErrorReply, left: number } | undefined
  let releaseHeld: (() => void) | undefined
  let holding: Holding | undefined

  const server = net.createServer((client) => {
    accepted++
    if (refuse) {
      refused++
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
      if (failing === undefined && holding?.link !== undefined) {
        upstream.write(chunk)
        return
      }
      if (failing === undefined && holding === undefined) {
        upstream.write(chunk)
        return
      }
      for (const frame of framer.push(chunk)) {
        const message = parseMessage(frame)
        const name = Object.keys(message.command)[0] ?? ''
        if (holding !== undefined && holding.link === undefined && holding.matches(message.command)) {
          holding.link = link
          link.heldRequest = message.requestId
          link.upstreamFramer = new MessageFramer()
          upstream.write(frame)
        } else if (failing !== undefined && failing.names.has(name) && failing.left > 0) {
          failing.left--
          client.write(encodeReply(message, { ok: 0, ...failing.reply }))
        } else {
          upstream.write(frame)
        }
      }
    })
    upstream.on('data', (chunk: Buffer) => {
      if (link.silent) return
      if (link.upstreamFramer !== undefined) {
        for (const frame of link.upstreamFramer.push(chunk)) {
          // responseTo, the fourth int32 of the header, names the request answered.
          if (holding !== undefined && !holding.released && frame.readInt32LE(8) === link.heldRequest) {
            if (holding.damage === undefined) {
              holding.reply = frame
              holding.onHeld()
            } else {
              const damaged = Buffer.from(frame)
              holding.damage(damaged)
              client.write(damaged)
              holding = undefined
            }
          } else {
            client.write(frame)
          }
        }
        return
      }
      if (delayMs > 0) {
        delayed++
        setTimeout(() => {
          delayed--
          if (!link.silent) client.write(chunk)
        }, delayMs)
      } else {
        client.write(chunk)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port

  return {
    uri: `mongodb://127.0.0.1:${port}/?directConnection=true`,
    port,
    connections: () => links.size,
    accepted: () => accepted,
    refused: () => refused,
    delayed: () => delayed,
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
    holdReply: (matches) => {
      let onHeld = (): void => {}
      const held = new Promise<void>((resolve) => { onHeld = resolve })
      const hold: NonNullable<typeof holding> = { matches, released: false, onHeld }
      holding = hold
      const release = (): void => {
        if (hold.released) return
        hold.released = true
        if (hold.reply !== undefined && hold.link !== undefined) hold.link.client.write(hold.reply)
        if (holding === hold) holding = undefined
        if (releaseHeld === release) releaseHeld = undefined
      }
      releaseHeld = release
      return { held, release }
    },
    rewriteReply: (matches, damage) => {
      holding = { matches, released: false, onHeld: () => {}, damage }
    },
    heal: () => {
      refuse = false
      silentNew = false
      delayMs = 0
      failing = undefined
      releaseHeld?.()
      holding = undefined
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
