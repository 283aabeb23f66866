// The offline stand-in of a test file, on loopback, and bounded waits for its change streams.
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import { deserialize, serialize } from 'bson'
import { MongoClient, type ChangeStream, type Document, type MongoClientOptions } from 'mongodb'
import type { Test } from 'tap'
import type { AwaitClock } from '../../offline-mongodb/await-clock.js'
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
export async function standIn (
  t: Test, options: OfflineMongoOptions = {}, clientOptions: MongoClientOptions = {}
): Promise<StandIn> {
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

/**
 * A wait the stand-in asked its clock for (a getMore's maxTimeMS): it ends when the test fires it,
 * or the server cancels it.
 */
export interface ClockWait {
  ms: number
  fire: () => void
  ended: Promise<'fired' | 'cancelled'>
}

/** A clock for the stand-in's getMore waits that never moves by itself: the test fires each wait. */
export function testClock (): AwaitClock & { next: (what: string, ms?: number) => Promise<ClockWait> } {
  const asked: ClockWait[] = []
  const takers: Array<(wait: ClockWait) => void> = []
  return {
    after: (ms, fire) => {
      let end = (_how: 'fired' | 'cancelled'): void => {}
      const ended = new Promise<'fired' | 'cancelled'>((resolve) => { end = resolve })
      let over = false
      const finish = (how: 'fired' | 'cancelled'): void => {
        if (over) return
        over = true
        end(how)
        if (how === 'fired') fire()
      }
      const wait = { ms, fire: () => { finish('fired') }, ended }
      const taker = takers.shift()
      if (taker === undefined) asked.push(wait)
      else taker(wait)
      return () => { finish('cancelled') }
    },
    /** The next wait the server asks for (in order), within `ms`. */
    next: async (what, ms = 5000) => {
      const waiting = asked.shift()
      if (waiting !== undefined) return waiting
      let take = (_wait: ClockWait): void => {}
      try {
        return await within(new Promise<ClockWait>((resolve) => { take = resolve; takers.push(take) }), ms, what)
      } finally {
        const at = takers.indexOf(take)
        if (at >= 0) takers.splice(at, 1)
      }
    }
  }
}

/** Whether `promise` has settled, read at any time. */
export function watchSettled (promise: Promise<unknown>): () => boolean {
  let settled = false
  promise.then(() => { settled = true }, () => { settled = true })
  return () => settled
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
export async function rawConnection (t: Test, port: number): Promise<{
  socket: net.Socket, replies: RawReply[], replyTo: (id: number) => Promise<RawReply>
}> {
  const socket = net.connect(port, '127.0.0.1')
  t.teardown(() => socket.destroy())
  await new Promise((resolve) => socket.once('connect', resolve))
  const replies: RawReply[] = []
  const framer = new MessageFramer()
  // Told of every reply: a reply awaited is looked for as replies come, within a bound.
  const arrived = new Set<() => void>()
  socket.on('data', (chunk: Buffer) => {
    for (const reply of framer.push(chunk)) {
      replies.push({
        responseTo: reply.readInt32LE(8), at: Date.now(), body: deserialize(reply.subarray(21), { promoteLongs: false })
      })
    }
    for (const look of [...arrived]) look()
  })
  const replyTo = async (id: number): Promise<RawReply> => {
    let look = (): void => {}
    try {
      return await within(new Promise<RawReply>((resolve) => {
        look = () => {
          const reply = replies.find((r) => r.responseTo === id)
          if (reply !== undefined) resolve(reply)
        }
        arrived.add(look)
        look()
      }), 5000, `the reply to ${id}`)
    } finally {
      arrived.delete(look)
    }
  }
  return { socket, replies, replyTo }
}
