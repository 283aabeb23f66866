// Micro-benchmark: a cursor's signature, HMAC-SHA256 as the service makes it
// (list-endpoint/hmac-sha256.ts, from node:crypto's one-shot hash()) against createHmac, which
// makes a native object per signature. Interleaved rounds, the median of each.
import { createHmac, randomBytes } from 'node:crypto'
import { HmacSha256 } from '../list-endpoint/hmac-sha256.js'
import type { Table } from './report.js'
import { median, timePerCall } from './timing.js'

export interface SignatureFigure { message: string, hashNs: number, createHmacNs: number, ratio: number }

export function benchSignature ({ rounds = 15, calls = 20_000 } = {}): SignatureFigure[] {
  const key = randomBytes(32)
  const signer = new HmacSha256(key)
  // A cursor of one sort key and _id is about 60 bytes before its signature; long string keys make it longer.
  return [60, 600].map((length) => {
    const message = randomBytes(length)
    const ours: number[] = []
    const theirs: number[] = []
    for (let round = 0; round < rounds; round++) {
      ours.push(timePerCall(() => signer.signBase64url(message), calls))
      theirs.push(timePerCall(() => createHmac('sha256', key).update(message).digest('base64url'), calls))
    }
    return {
      message: `${length} bytes`,
      hashNs: median(ours),
      createHmacNs: median(theirs),
      ratio: median(ours) / median(theirs)
    }
  })
}

export function signatureTable (figures: SignatureFigure[]): Table {
  return {
    title: 'A cursor\'s signature, HMAC-SHA256 as base64url (median ns per signature)',
    rows: figures.map((f) => ({
      message: f.message,
      'hmac-sha256.ts ns': Math.round(f.hashNs),
      'createHmac ns': Math.round(f.createHmacNs),
      'hmac-sha256.ts / createHmac': f.ratio.toFixed(2)
    }))
  }
}
