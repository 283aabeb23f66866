// A wire-protocol replay database for the HTTP benchmark: while recording it passes every
// command through to the real database and keeps each reply under the command's text; once
// replaying, it answers a command seen before from memory, at no cost to speak of, so that
// what the benchmark measures is the service, not the database. A command it has not seen is
// still passed through (and counted as a miss, which the benchmark reports).
import net from 'node:net'
import { EJSON } from 'bson'
import { encodeReply, MessageFramer, parseMessage, OP_MSG } from '../offline-mongodb/wire-protocol.js'
import { helloReply } from '../offline-mongodb/hello.js'
import type { Doc } from '../offline-mongodb/storage.js'

export interface ReplayDatabase {
  uri: string
  /** From now on, answer recorded commands from memory. */
  replay: () => void
  stats: () => { recorded: number, hits: number, misses: number }
  close: () => Promise<void>
}

/** The command without what differs between two sends of the same query (session, clock). */
function keyOf (command: Doc): string {
  const { lsid, $clusterTime, txnNumber, ...rest } = command
  return EJSON.stringify(rest, { relaxed: false })
}

const HANDSHAKE = new Set(['hello', 'isMaster', 'ismaster'])

export async function startReplay (upstreamUri: string, host = '127.0.0.1'): Promise<ReplayDatabase> {
  const upstream = /^mongodb:\/\/([^/:]+):(\d+)/.exec(upstreamUri)
  if (upstream === null) throw new Error(`the replay database needs a mongodb://host:port upstream, not ${upstreamUri}`)
  const [, upstreamHost, upstreamPort] = upstream as unknown as [string, string, string]
  /** Reply frames from the opCode on (header bytes 12…), by command text. */
  const replies = new Map<string, Buffer>()
  let replaying = false
  let hits = 0
  let misses = 0
  let connections = 0
  const sockets = new Set<net.Socket>()
  let nextRequestId = 1

  const server = net.createServer((client) => {
    sockets.add(client)
    client.setNoDelay(true)
    const connectionId = ++connections
    const waiting = new Map<number, string>()
    let toUpstream: net.Socket | undefined
    const framer = new MessageFramer()
    const framerUp = new MessageFramer()

    const passThrough = (frame: Buffer, requestId: number, key: string): void => {
      if (toUpstream === undefined) {
        toUpstream = net.connect(Number(upstreamPort), upstreamHost)
        toUpstream.setNoDelay(true)
        sockets.add(toUpstream)
        toUpstream.on('data', (chunk) => {
          for (const reply of framerUp.push(chunk)) {
            const key = waiting.get(reply.readInt32LE(8))
            if (key !== undefined && reply.readInt32LE(12) === OP_MSG) replies.set(key, Buffer.from(reply.subarray(12)))
            client.write(reply)
          }
        })
        toUpstream.on('error', () => client.destroy())
        toUpstream.on('close', () => client.destroy())
      }
      waiting.set(requestId, key)
      toUpstream.write(frame)
    }

    client.on('data', (chunk) => {
      try {
        for (const frame of framer.push(chunk)) {
          const message = parseMessage(frame)
          const name = Object.keys(message.command)[0] ?? ''
          if (HANDSHAKE.has(name)) {
            client.write(encodeReply(message, helloReply(connectionId)))
            continue
          }
          const key = keyOf(message.command)
          const recorded = replaying ? replies.get(key) : undefined
          if (recorded === undefined) {
            if (replaying) misses++
            passThrough(frame, message.requestId, key)
            continue
          }
          hits++
          if (message.moreToCome) continue
          const head = Buffer.allocUnsafe(12)
          head.writeInt32LE(12 + recorded.length, 0)
          head.writeInt32LE(nextRequestId++ & 0x7fffffff, 4)
          head.writeInt32LE(message.requestId, 8)
          client.write(Buffer.concat([head, recorded]))
        }
      } catch {
        client.destroy()
      }
    })
    client.on('error', () => client.destroy())
    client.on('close', () => {
      sockets.delete(client)
      toUpstream?.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => resolve())
  })
  const { port } = server.address() as net.AddressInfo
  return {
    uri: `mongodb://${host}:${port}/?directConnection=true`,
    replay: () => { replaying = true },
    stats: () => ({ recorded: replies.size, hits, misses }),
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
