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

interface Failing { names: Set<string>, reply: ErrorReply, left: number }

/** What the proxy's connections and its controls share: the open links, the counts and the faults on now. */
interface ProxyState {
  links: Set<Link>
  accepted: number
  refused: number
  delayed: number
  refuse: boolean
  silentNew: boolean
  delayMs: number
  failing: Failing | undefined
  releaseHeld: (() => void) | undefined
  holding: Holding | undefined
}

export async function startFaultProxy (target: { host: string, port: number }): Promise<FaultProxy> {
  const state: ProxyState = {
    links: new Set<Link>(),
    accepted: 0,
    refused: 0,
    delayed: 0,
    refuse: false,
    silentNew: false,
    delayMs: 0,
    failing: undefined,
    releaseHeld: undefined,
    holding: undefined
  }
  const { links } = state

  const server = net.createServer((client) => acceptConnection(state, target, client))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port

  return {
    uri: `mongodb://127.0.0.1:${port}/?directConnection=true`,
    port,
    connections: () => links.size,
    accepted: () => state.accepted,
    refused: () => state.refused,
    delayed: () => state.delayed,
    outage: () => {
      state.refuse = true
      for (const link of links) {
        link.client.resetAndDestroy()
        link.server.destroy()
      }
    },
    blackhole: () => {
      state.silentNew = true
      for (const link of links) link.silent = true
    },
    halfOpen: () => {
      for (const link of links) link.silent = true
    },
    slow: (ms) => { state.delayMs = ms },
    failCommands: (names, reply, times = Infinity) => { state.failing = { names: new Set(names), reply, left: times } },
    holdReply: (matches) => holdNextReply(state, matches),
    rewriteReply: (matches, damage) => {
      state.holding = { matches, released: false, onHeld: () => {}, damage }
    },
    heal: () => {
      state.refuse = false
      state.silentNew = false
      state.delayMs = 0
      state.failing = undefined
      state.releaseHeld?.()
      state.holding = undefined
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

/** Takes a connection from the service: resets it during an outage, else links it to the database. */
function acceptConnection (state: ProxyState, target: { host: string, port: number }, client: net.Socket): void {
  state.accepted++
  if (state.refuse) {
    state.refused++
    client.resetAndDestroy()
    return
  }
  const upstream = net.connect(target.port, target.host)
  const link: Link = { client, server: upstream, silent: state.silentNew }
  state.links.add(link)
  const drop = () => {
    state.links.delete(link)
    client.destroy()
    upstream.destroy()
  }
  client.on('error', drop).on('close', drop)
  upstream.on('error', drop).on('close', drop)

  forwardRequests(state, link)
  forwardReplies(state, link)
}

/** Passes the service's commands to the database, answering failing ones itself and marking the one to hold. */
function forwardRequests (state: ProxyState, link: Link): void {
  const { client, server: upstream } = link
  const framer = new MessageFramer()
  client.on('data', (chunk: Buffer) => {
    if (link.silent) return
    if (state.failing === undefined && state.holding?.link !== undefined) {
      upstream.write(chunk)
      return
    }
    if (state.failing === undefined && state.holding === undefined) {
      upstream.write(chunk)
      return
    }
    for (const frame of framer.push(chunk)) {
      const message = parseMessage(frame)
      const name = Object.keys(message.command)[0] ?? ''
      const { holding, failing } = state
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
}

/** Passes the database's replies to the service: held, damaged or slowed when a fault asks for it. */
function forwardReplies (state: ProxyState, link: Link): void {
  const { client, server: upstream } = link
  upstream.on('data', (chunk: Buffer) => {
    if (link.silent) return
    if (link.upstreamFramer !== undefined) {
      for (const frame of link.upstreamFramer.push(chunk)) {
        const { holding } = state
        // responseTo, the fourth int32 of the header, names the request answered.
        if (holding !== undefined && !holding.released && frame.readInt32LE(8) === link.heldRequest) {
          if (holding.damage === undefined) {
            holding.reply = frame
            holding.onHeld()
          } else {
            const damaged = Buffer.from(frame)
            holding.damage(damaged)
            client.write(damaged)
            state.holding = undefined
          }
        } else {
          client.write(frame)
        }
      }
      return
    }
    if (state.delayMs > 0) {
      state.delayed++
      setTimeout(() => {
        state.delayed--
        if (!link.silent) client.write(chunk)
      }, state.delayMs)
    } else {
      client.write(chunk)
    }
  })
}

/** Holds the database's reply to the next command that `matches` until it is released or the proxy healed. */
function holdNextReply (state: ProxyState, matches: Holding['matches']): HeldReply {
  let onHeld = (): void => {}
  const held = new Promise<void>((resolve) => { onHeld = resolve })
  const hold: Holding = { matches, released: false, onHeld }
  state.holding = hold
  const release = (): void => {
    if (hold.released) return
    hold.released = true
    if (hold.reply !== undefined && hold.link !== undefined) hold.link.client.write(hold.reply)
    if (state.holding === hold) state.holding = undefined
    if (state.releaseHeld === release) state.releaseHeld = undefined
  }
  state.releaseHeld = release
  return { held, release }
}
