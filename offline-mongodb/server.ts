import net from 'node:net'
import { runCommand, type ServerState } from './commands.js'
import { Cursors } from './cursors.js'
import { encodeReply, parseMessage, readMessages } from './wire-protocol.js'
import { Storage } from './storage.js'

export interface OfflineMongoOptions {
  /** 0 (the default) picks a free port. */
  port?: number
  host?: string
}

export interface OfflineMongo {
  /** A connection string the official driver accepts. */
  uri: string
  port: number
  close: () => Promise<void>
}

/** Starts an in-memory MongoDB stand-in speaking the wire protocol on a TCP port. */
export async function start ({ port = 0, host = '127.0.0.1' }: OfflineMongoOptions = {}): Promise<OfflineMongo> {
  const storage = new Storage()
  const cursors = new Cursors()
  const failPoints = new Set<string>()
  const sockets = new Set<net.Socket>()
  let connections = 0

  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.setNoDelay(true)
    const state: ServerState = { storage, cursors, failPoints, connectionId: ++connections }
    let pending: Buffer = Buffer.alloc(0)
    socket.on('data', (chunk) => {
      try {
        const { messages, rest } = readMessages(pending.length === 0 ? chunk : Buffer.concat([pending, chunk]))
        pending = rest
        for (const frame of messages) {
          const message = parseMessage(frame)
          const reply = runCommand(message.command, state)
          if (!message.moreToCome) socket.write(encodeReply(message, reply))
        }
      } catch {
        // A frame that cannot be read leaves the stream out of step: drop the connection, as mongod does.
        socket.destroy()
      }
    })
    socket.on('error', () => socket.destroy())
    socket.on('close', () => sockets.delete(socket))
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as net.AddressInfo
  const shownHost = host.includes(':') ? `[${host}]` : host
  return {
    uri: `mongodb://${shownHost}:${address.port}/?directConnection=true`,
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      cursors.closeAll()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
