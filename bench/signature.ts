// Micro-benchmark: signing a cursor, the two ways node:crypto offers, side by side in alternating
// rounds: an Hmac object per signature (createHmac), and two one-shot hashes over pads prepared
// once (list-endpoint/cursor-mac.ts, what the service uses).
import { createHmac, randomBytes } from 'node:crypto'
import { ObjectId } from 'mongodb'
import { CursorCodec, valuesDocument } from '../list-endpoint/cursor.js'
import { CursorMac } from '../list-endpoint/cursor-mac.js'
import type { Table } from './report.js'
import { median, timePerCall } from './timing.js'

export interface SignatureFigure { way: string, ns: number, ratio: number }

export function benchSignature ({ rounds = 15, calls = 20_000 } = {}): SignatureFigure[] {
  const key = randomBytes(32)
  // A cursor of an _id sort as a list writes it: the head of the binding, then the values.
  const codec = new CursorCodec([key])
  const head = codec.head({ path: 'sessions / 65cd7e3007370d3300000000', filter: '{}', sort: '{"_id":1}', fields: '*' })
  const payload = Buffer.concat([head, valuesDocument([new ObjectId()])])
  const mac = new CursorMac(key)
  const ways: Array<[string, () => unknown]> = [
    ['createHmac per signature', () => createHmac('sha256', key).update(payload).digest()],
    ['crypto.hash over prepared pads (the service)', () => mac.mac(payload)]
  ]
  const times = ways.map((): number[] => [])
  for (const [, sign] of ways) timePerCall(sign, calls)
  for (let round = 0; round < rounds; round++) ways.forEach(([, sign], i) => times[i]?.push(timePerCall(sign, calls)))
  const medians = times.map(median)
  return ways.map(([way], i) => ({ way, ns: medians[i] as number, ratio: (medians[i] as number) / (medians[1] as number) }))
}

export function signatureTable (figures: SignatureFigure[]): Table {
  return {
    title: 'Signing a cursor of an _id sort with HMAC-SHA256 (median ns per signature, alternating rounds; ratio to the service\'s way)',
    rows: figures.map((f) => ({ way: f.way, ns: Math.round(f.ns), ratio: f.ratio.toFixed(2) }))
  }
}

if (/signature\.[jt]s$/.test(process.argv[1] ?? '')) {
  const { printTable } = await import('./report.js')
  printTable(signatureTable(benchSignature()))
}
