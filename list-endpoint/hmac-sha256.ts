// HMAC-SHA256 (RFC 2104 over FIPS 180-4 SHA-256) for the cursors' signatures, keyed once.
//
// Why not node:crypto: a cursor's MAC covers ~50 bytes, two SHA-256 blocks once the key's pads
// are hashed. node:crypto does that work in microseconds, but every MAC needs native Hash
// objects (a copy of each keyed state, or createHmac's context), and in the request path, under
// load, those cost far more than in a loop: a 1-document page with a next page spent ~7 µs of
// its ~80 on the MAC with copied native states, against under 1 µs here (measured side by
// side, docs/performance.md). Here the key's pads are hashed once into two midstates, and each
// MAC compresses the payload's blocks into a copy of them, with no object but the 32-byte
// result. The output is createHmac('sha256', key)'s, byte for byte (test/list-endpoint/
// hmac-sha256.test.ts checks every payload length across the block boundaries and random keys).
// Nothing here branches on or indexes by secret data.
import { createHash } from 'node:crypto'

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
])
const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
const BLOCK = 64

// Scratch space of the one thread that runs this: the message schedule, the running state and
// the padded last blocks. Every MAC writes them before reading them.
const schedule = new Int32Array(64)
const state = new Int32Array(8)
const last = new Uint8Array(2 * BLOCK)

/** One SHA-256 compression of the 64 bytes of `data` at `at` into `h`. */
function compress (h: Int32Array, data: Uint8Array, at: number): void {
  const w = schedule
  for (let i = 0; i < 16; i++) {
    const j = at + 4 * i
    w[i] = ((data[j] as number) << 24) | ((data[j + 1] as number) << 16) | ((data[j + 2] as number) << 8) | (data[j + 3] as number)
  }
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15] as number
    const y = w[i - 2] as number
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)
    w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) | 0
  }
  let a = h[0] as number
  let b = h[1] as number
  let c = h[2] as number
  let d = h[3] as number
  let e = h[4] as number
  let f = h[5] as number
  let g = h[6] as number
  let hh = h[7] as number
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
    const t1 = (hh + s1 + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) | 0
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0
    hh = g
    g = f
    f = e
    e = (d + t1) | 0
    d = c
    c = b
    b = a
    a = (t1 + t2) | 0
  }
  h[0] = ((h[0] as number) + a) | 0
  h[1] = ((h[1] as number) + b) | 0
  h[2] = ((h[2] as number) + c) | 0
  h[3] = ((h[3] as number) + d) | 0
  h[4] = ((h[4] as number) + e) | 0
  h[5] = ((h[5] as number) + f) | 0
  h[6] = ((h[6] as number) + g) | 0
  h[7] = ((h[7] as number) + hh) | 0
}

/** The digest of (one block already compressed into `midstate`) followed by `data`, into `out`. */
function finish (midstate: Int32Array, data: Uint8Array, out: Uint8Array): void {
  state.set(midstate)
  const length = data.length
  let at = 0
  for (; at + BLOCK <= length; at += BLOCK) compress(state, data, at)
  // Padding: 0x80, zeros, then the message's length in bits (the pad block included) as 64 bits.
  const rest = length - at
  const blocks = rest + 9 <= BLOCK ? 1 : 2
  const end = blocks * BLOCK
  last.fill(0, 0, end)
  last.set(data.subarray(at), 0)
  last[rest] = 0x80
  const bits = (BLOCK + length) * 8
  const high = Math.floor(bits / 2 ** 32)
  last[end - 8] = high >>> 24
  last[end - 7] = high >>> 16
  last[end - 6] = high >>> 8
  last[end - 5] = high
  last[end - 4] = bits >>> 24
  last[end - 3] = bits >>> 16
  last[end - 2] = bits >>> 8
  last[end - 1] = bits
  for (let i = 0; i < blocks; i++) compress(state, last, i * BLOCK)
  for (let i = 0; i < 8; i++) {
    const word = state[i] as number
    out[4 * i] = word >>> 24
    out[4 * i + 1] = word >>> 16
    out[4 * i + 2] = word >>> 8
    out[4 * i + 3] = word
  }
}

/** The state after compressing one 64-byte block. */
function midstateOf (block: Uint8Array): Int32Array {
  const h = Int32Array.from(IV)
  compress(h, block, 0)
  return h
}

export class HmacSha256 {
  private readonly inner: Int32Array
  private readonly outer: Int32Array
  private readonly innerDigest = new Uint8Array(32)

  constructor (key: Buffer) {
    const block = key.length > BLOCK ? createHash('sha256').update(key).digest() : key
    const innerPad = Buffer.alloc(BLOCK, 0x36)
    const outerPad = Buffer.alloc(BLOCK, 0x5c)
    for (let i = 0; i < block.length; i++) {
      innerPad[i] = (innerPad[i] as number) ^ (block[i] as number)
      outerPad[i] = (outerPad[i] as number) ^ (block[i] as number)
    }
    this.inner = midstateOf(innerPad)
    this.outer = midstateOf(outerPad)
    innerPad.fill(0)
    outerPad.fill(0)
  }

  /** HMAC-SHA256 of `payload` (a string as its UTF-8 bytes), as createHmac would give it. */
  mac (payload: Buffer | string): Buffer {
    finish(this.inner, typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload, this.innerDigest)
    const out = Buffer.allocUnsafe(32)
    finish(this.outer, this.innerDigest, out)
    return out
  }
}
