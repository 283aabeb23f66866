// A one-member replica set whose member steps down and stays a secondary, as in an election:
// it still answers every check, but no member is primary, so a request that needs the primary
// waits for one. The offline stand-in is always primary; this speaks just enough of the wire
// protocol: `hello` as the stand-in's helloReply, every other command as primary with an empty
// cursor, and, once stepped down, refused as a secondary refuses it.
import net from 'node:net'
import { Long } from 'bson'
import { helloReply } from '../../offline-mongodb/hello.js'
import { encodeReply, MessageFramer, parseMessage } from '../../offline-mongodb/wire-protocol.js'

export interface ElectingMember {
  /** A replica set URI naming this member alone. */
  uri: string
  /** From now on the member is a secondary and the set has no primary. */
  stepDown: () => void
  /** The checks (`hello`) it has answered as a secondary. */
  checksAsSecondary: () => number
  close: () => Promise<void>
}

const HELLO = new Set(['hello', 'ismaster', 'isMaster'])
const NOT_PRIMARY = {
  ok: 0, code: 13435, codeName: 'NotPrimaryNoSecondaryOk', errmsg: 'not primary and secondaryOk=false'
}

export async function startElectingMember (): Promise<ElectingMember> {
  const sockets = new Set<net.Socket>()
  let primary = true
  let checksAsSecondary = 0
  let connections = 0
  const member = { setName: 'rs0', me: '' }
  const answer = (connectionId: number, command: Record<string, unknown>): Record<string, unknown> => {
    const name = Object.keys(command)[0] ?? ''
    if (HELLO.has(name)) {
      if (primary) return helloReply(connectionId, member)
      checksAsSecondary++
      const { primary: _primary, electionId: _electionId, ...hello } = helloReply(connectionId, member)
      return { ...hello, ismaster: false, isWritablePrimary: false, secondary: true }
    }
    if (!primary) return NOT_PRIMARY
    return {
      ok: 1, cursor: { id: Long.fromNumber(0), ns: `${String(command.$db)}.${String(command[name])}`, firstBatch: [] }
    }
  }
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket)).on('error', () => socket.destroy())
    const connectionId = ++connections
    const framer = new MessageFramer()
    socket.on('data', (chunk: Buffer) => {
      for (const frame of framer.push(chunk)) {
        const message = parseMessage(frame)
        if (!message.moreToCome) socket.write(encodeReply(message, answer(connectionId, message.command)))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  member.me = `127.0.0.1:${(server.address() as net.AddressInfo).port}`
  return {
    uri: `mongodb://${member.me}/?replicaSet=rs0`,
    stepDown: () => { primary = false },
    checksAsSecondary: () => checksAsSecondary,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
