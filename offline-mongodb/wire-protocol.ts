// Framing of the MongoDB wire protocol: https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
import { deserialize, serialize } from 'bson'
import type { Doc } from './storage.js'

export const OP_REPLY = 1
export const OP_QUERY = 2004
export const OP_MSG = 2013

const CHECKSUM_PRESENT = 1
export const MORE_TO_COME = 2

/** `bsonRegExp` keeps the `s` flag; `promoteLongs: false` keeps Int64 values (cursor ids) as Long. */
const DECODE = { bsonRegExp: true, promoteLongs: false } as const

export interface Message {
  requestId: number
  opCode: number
  /** The command document, with OP_MSG document sequences folded in as arrays. */
  command: Doc
  /** The client expects no reply (OP_MSG moreToCome). */
  moreToCome: boolean
}

/**
 * Cuts a connection's bytes into whole messages. Chunks are kept as they come and joined once
 * a message is complete: a 16 MiB message that arrives in 64 KiB chunks is copied once, not
 * once per chunk.
 */
export class MessageFramer {
  #chunks: Buffer[] = []
  #buffered = 0
  /** Bytes needed before a message can be cut: its length field, then the length it gives. */
  #needed = 4

  /** The messages `chunk` completes, in order; throws on a length no message can have. */
  push (chunk: Buffer): Buffer[] {
    this.#chunks.push(chunk)
    this.#buffered += chunk.length
    if (this.#buffered < this.#needed) return []
    const buffer = this.#chunks.length === 1 ? chunk : Buffer.concat(this.#chunks, this.#buffered)
    const messages: Buffer[] = []
    let offset = 0
    while (buffer.length - offset >= 4) {
      const length = buffer.readInt32LE(offset)
      if (length < 16) throw new Error(`invalid message length ${length}`)
      if (buffer.length - offset < length) break
      messages.push(buffer.subarray(offset, offset + length))
      offset += length
    }
    const rest = buffer.subarray(offset)
    this.#chunks = rest.length === 0 ? [] : [rest]
    this.#buffered = rest.length
    this.#needed = rest.length >= 4 ? rest.readInt32LE(0) : 4
    return messages
  }
}

function readCString (buffer: Buffer, offset: number): [string, number] {
  const end = buffer.indexOf(0, offset)
  if (end < 0) throw new Error('unterminated cstring')
  return [buffer.toString('utf8', offset, end), end + 1]
}

function readDocument (buffer: Buffer, offset: number): [Doc, number] {
  const size = buffer.readInt32LE(offset)
  return [deserialize(buffer.subarray(offset, offset + size), DECODE) as Doc, offset + size]
}

export function parseMessage (frame: Buffer): Message {
  const requestId = frame.readInt32LE(4)
  const opCode = frame.readInt32LE(12)
  if (opCode === OP_QUERY) {
    const [collection, afterName] = readCString(frame, 20)
    const [query] = readDocument(frame, afterName + 8)
    const command = (query.$query !== undefined ? query.$query : query) as Doc
    const db = collection.endsWith('.$cmd') ? collection.slice(0, -5) : 'admin'
    return { requestId, opCode, command: { ...command, $db: db }, moreToCome: false }
  }
  if (opCode !== OP_MSG) throw new Error(`unsupported opCode ${opCode}`)
  const flags = frame.readUInt32LE(16)
  const end = frame.length - ((flags & CHECKSUM_PRESENT) !== 0 ? 4 : 0)
  let offset = 20
  let command: Doc = {}
  const sequences: Array<[string, Doc[]]> = []
  while (offset < end) {
    const kind = frame.readUInt8(offset++)
    if (kind === 0) {
      [command, offset] = readDocument(frame, offset)
    } else if (kind === 1) {
      const sectionEnd = offset + frame.readInt32LE(offset)
      const [identifier, docsStart] = readCString(frame, offset + 4)
      const docs: Doc[] = []
      for (let at = docsStart; at < sectionEnd;) {
        const [doc, next] = readDocument(frame, at)
        docs.push(doc)
        at = next
      }
      sequences.push([identifier, docs])
      offset = sectionEnd
    } else {
      throw new Error(`unknown OP_MSG section kind ${kind}`)
    }
  }
  for (const [identifier, docs] of sequences) command[identifier] = docs
  return { requestId, opCode, command, moreToCome: (flags & MORE_TO_COME) !== 0 }
}

let nextRequestId = 1

function header (length: number, responseTo: number, opCode: number): Buffer {
  const head = Buffer.alloc(16)
  head.writeInt32LE(length, 0)
  head.writeInt32LE(nextRequestId++ & 0x7fffffff, 4)
  head.writeInt32LE(responseTo, 8)
  head.writeInt32LE(opCode, 12)
  return head
}

/** OP_REPLY answers the legacy OP_QUERY handshake; everything else is answered with OP_MSG. */
export function encodeReply (request: Message, reply: Doc): Buffer {
  const body = serialize(reply)
  if (request.opCode === OP_QUERY) {
    const fields = Buffer.alloc(20)
    fields.writeInt32LE(1, 16) // numberReturned; flags, cursorID and startingFrom stay 0
    return Buffer.concat([header(16 + 20 + body.length, request.requestId, OP_REPLY), fields, body])
  }
  const prefix = Buffer.alloc(5) // flagBits 0, then section kind 0
  return Buffer.concat([header(16 + 5 + body.length, request.requestId, OP_MSG), prefix, body])
}
