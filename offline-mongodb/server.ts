import net from 'node:net'
import { realAwaitClock, type AwaitClock } from './await-clock.js'
import { runCommand } from './commands.js'
import type { ServerState } from './server-state.js'
import { Cursors } from './cursors.js'
import { type HazardOptions, hazardSettings, hazardsFromEnvironment } from './hazard-options.js'
import { ConnectionHazards, type HazardControls, Hazards } from './hazards.js'
import { Oplog } from './oplog.js'
import { encodeReply, MessageFramer, parseMessage, type Message } from './wire-protocol.js'
import { Storage, type Doc } from './storage.js'

export interface OfflineMongoOptions {
  /** 0 (the default) picks a free port. */
  port?: number
  host?: string
  /** How many writes the oplog keeps for change streams to resume from (10,000 by default). */
  oplogEntries?: number
  /** The name of the one-member replica set the server presents itself as ('rs0' by default). */
  replicaSet?: string
  /**
   * What MongoDB may do and the stand-in does not by default (README.md, "Hazards"), from a seed.
   * Unset: OFFLINE_MONGODB_HAZARDS decides (`<seed>` or a JSON object of these options); false: none.
   */
  hazards?: HazardOptions | false
  /** Keeps the wait of a change stream's getMore (maxTimeMS): real timers unless a test gives its own. */
  clock?: AwaitClock
}

export interface OfflineMongo {
  /** A connection string the official driver accepts. */
  uri: string
  port: number
  /** With hazards: the majority point and what waits for it, for tests to see and move. */
  hazards?: HazardControls
  close: () => Promise<void>
}

/** The address a client can reach the server at, as a replica set member advertises it. */
function advertisedHost (host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  return `${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`
}

/** Starts an in-memory MongoDB stand-in speaking the wire protocol on a TCP port. */
export async function start (options: OfflineMongoOptions = {}): Promise<OfflineMongo> {
  const {
    port = 0, host = '127.0.0.1', oplogEntries = 10_000, replicaSet = 'rs0',
    hazards: asked = hazardsFromEnvironment(), clock = realAwaitClock
  } = options
  if (!Number.isInteger(oplogEntries) || oplogEntries < 1) {
    throw new RangeError(`oplogEntries must be a positive integer, got ${oplogEntries}`)
  }
  const settings = asked === false || asked === undefined ? undefined : hazardSettings(asked)
  const storage = new Storage()
  const cursors = new Cursors()
  const oplog = new Oplog(oplogEntries)
  const hazards = settings === undefined ? undefined : new Hazards(settings, oplog)
  const failPoints = new Set<string>()
  const sockets = new Set<net.Socket>()
  const shutdown = new AbortController()
  const sessionWrites = new Map()
  const opcounters = { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 }
  const member = { setName: replicaSet, me: '' }
  let connections = 0
  // What every connection's state shares.
  const shared = { storage, cursors, oplog, failPoints, opcounters, member, clock, sessionWrites, hazards }

  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.setNoDelay(true)
    const closed = new AbortController()
    const connectionId = ++connections
    const dice = settings === undefined ? undefined : new ConnectionHazards(settings, connectionId)
    const signal = AbortSignal.any([closed.signal, shutdown.signal])
    const state: ServerState = { ...shared, connectionId, signal, connectionHazards: dice }
    const framer = new MessageFramer()
    // mongod answers the commands of one connection one at a time, in order: while a command
    // waits (a change stream's getMore), the ones after it wait in this queue.
    const queue: Message[] = []
    let waiting = false

    const answer = (message: Message, reply: Doc): void => {
      if (!message.moreToCome && !socket.destroyed) socket.write(encodeReply(message, reply))
    }
    const drain = (): void => {
      // Commands of a client that went away are not run, as mongod stops reading its socket.
      if (socket.destroyed) queue.length = 0
      while (!waiting && queue.length > 0) {
        const message = queue.shift() as Message
        const reply = runCommand(message.command, state)
        // Hazards: the reply is slow to arrive, and the connection's next command waits for it.
        const delay = dice?.replyDelay() ?? 0
        if (!(reply instanceof Promise) && delay === 0) {
          answer(message, reply)
          continue
        }
        waiting = true
        Promise.resolve(reply).then(async (done) => {
          if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay).unref())
          waiting = false
          answer(message, done)
          drain()
        }, () => socket.destroy())
      }
    }

    socket.on('data', (chunk) => {
      try {
        for (const frame of framer.push(chunk)) queue.push(parseMessage(frame))
      } catch {
        // A frame that cannot be read leaves the stream out of step: drop the connection, as mongod does.
        socket.destroy()
        return
      }
      drain()
    })
    socket.on('error', () => socket.destroy())
    socket.on('close', () => {
      sockets.delete(socket)
      closed.abort()
    })
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as net.AddressInfo
  member.me = advertisedHost(host, address.port)
  const shownHost = host.includes(':') ? `[${host}]` : host
  return {
    uri: `mongodb://${shownHost}:${address.port}/?directConnection=true`,
    port: address.port,
    ...(hazards === undefined ? {} : { hazards }),
    close: async () => {
      hazards?.close()
      shutdown.abort()
      for (const socket of sockets) socket.destroy()
      cursors.closeAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
