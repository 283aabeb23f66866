// The offline stand-in of a test file, on loopback, and bounded waits for its change streams.
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { deserialize, serialize } from 'bson'
import { MongoClient, type ChangeStream, type Document, type MongoClientOptions } from 'mongodb'
import type { Test } from 'tap'
import { start, type OfflineMongo, type OfflineMongoOptions } from '../../offline-mongodb/server.js'
import { MessageFramer } from '../../offline-mongodb/wire-protocol.js'

export interface StandIn {
  server: OfflineMongo
  client: MongoClient
  /** A database name no other test uses. */
  dbName: () => string
}

/**
 * A stand-in server and a connected client, both closed when the test ends. Without hazards
 * unless `options` asks for them: OFFLINE_MONGODB_HAZARDS is for the service's tests, not these.
 */
export async function standIn (t: Test, options: OfflineMongoOptions = {}, clientOptions: MongoClientOptions = {}): Promise<StandIn> {
  const server = await start({ hazards: false, ...options })
  const client = await new MongoClient(server.uri, { serverSelectionTimeoutMS: 2000, ...clientOptions }).connect()
  t.teardown(async () => {
    await client.close()
    await server.close()
  })
  return { server, client, dbName: () => `cs_${randomBytes(4).toString('hex')}` }
}

/** The promise's outcome, or a rejection once `ms` have passed: no test waits without bound. */
export async function within<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

/** The next `count` events of a stream, within `ms` in all. */
export async function nextEvents (stream: ChangeStream, count: number, ms = 5000): Promise<Document[]> {
  const read = async (): Promise<Document[]> => {
    const events: Document[] = []
    while (events.length < count) events.push(await stream.next())
    return events
  }
  return await within(read(), ms, `${count} change event(s)`)
}

/** An OP_MSG with one body section (manual: "MongoDB Wire Protocol"). */
export function opMsg (requestId: number, command: Document): Buffer {
  const body = serialize(command)
  const head = Buffer.alloc(21)
  head.writeInt32LE(21 + body.length, 0)
  head.writeInt32LE(requestId, 4)
  head.writeInt32LE(2013, 12)
  return Buffer.concat([head, body])
}

export interface RawReply { responseTo: number, at: number, body: Document }

/** A connection that speaks OP_MSG itself, to send commands the driver would not send as such. */
export async function rawConnection (t: Test, port: number): Promise<{ socket: net.Socket, replies: RawReply[], replyTo: (id: number) => Promise<RawReply> }> {
  const socket = net.connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  await new Promise((resolve) => socket.once('connect', resolve))
  const replies: RawReply[] = []
  const framer = new MessageFramer()
  socket.on('data', (chunk: Buffer) => {
    for (const reply of framer.push(chunk)) {
      replies.push({ responseTo: reply.readInt32LE(8), at: Date.now(), body: deserialize(reply.subarray(21), { promoteLongs: false }) })
    }
  })
  const replyTo = async (id: number): Promise<RawReply> => await within((async () => {
    while (!replies.some((r) => r.responseTo === id)) await new Promise((resolve) => setTimeout(resolve, 10))
    return replies.find((r) => r.responseTo === id) as RawReply
  })(), 5000, `the reply to ${id}`)
  return { socket, replies, replyTo }
}
