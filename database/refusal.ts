// Whether the database refuses connections, from the driver's view of its servers (the SDAM
// monitoring events' topology description): every member it knows is Unknown because its last
// check could not connect at all. A down mongod refuses at once; a silent one times out, and a
// replica set in an election answers its checks as secondaries.
import type { ServerDescription } from 'mongodb'

/**
 * How a connection fails when the database refuses it: nothing listens (a mongod that is down or
 * restarting), the peer resets it as it opens, or the host has no route.
 */
const REFUSAL_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH'])

/**
 * Whether a check failed because its connection was refused (the driver's MongoNetworkError has
 * the socket's error as its cause).
 */
export function refusedBy (error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== null && typeof cause === 'object' && depth < 5;
    cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code
    if (typeof code === 'string' && REFUSAL_CODES.has(code)) return true
  }
  return false
}

/** The part of the driver's topology description read here. */
export interface KnownServers {
  servers: ReadonlyMap<string, Pick<ServerDescription, 'type' | 'error'>>
}

/** Whether every server the driver knows was refused at its last check (false while it knows none). */
export function everyMemberRefuses (topology: KnownServers | undefined): boolean {
  const servers = topology?.servers
  if (servers === undefined || servers.size === 0) return false
  for (const server of servers.values()) if (server.type !== 'Unknown' || !refusedBy(server.error)) return false
  return true
}
