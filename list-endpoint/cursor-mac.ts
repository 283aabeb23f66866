// HMAC-SHA256 for the signatures of cursors and feed tokens, from node:crypto alone.
//
// RFC 2104: HMAC(K, m) = H((K' ⊕ opad) ‖ H((K' ⊕ ipad) ‖ m)), K' the key, or its digest when it
// is longer than SHA-256's 64-byte block. The two pads are prepared once per key, and each MAC is
// two one-shot `crypto.hash` calls over them: no Hash or Hmac object per signature. On Node 24,
// createHmac costs several times as much per call for the ~60 bytes a cursor holds (the
// benchmark's signature table measures both side by side, docs/performance.md).
//
// At construction a known answer is checked against createHmac (RFC 4231 test case 2). Should the
// platform's one-shot hash be missing or disagree, every MAC is made by createHmac instead.
import { createHash, createHmac, hash, timingSafeEqual } from 'node:crypto'

const BLOCK = 64
const DIGEST = 32
/** Messages up to this size are written into the prepared buffer; longer ones are concatenated. */
const ROOM = 1024

/** RFC 4231, test case 2: a key shorter than the block, and its HMAC-SHA256. */
const KNOWN = { key: Buffer.from('Jefe'), data: Buffer.from('what do ya want for nothing?'), mac: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843' }

export class CursorMac {
  private readonly inner: Buffer
  private readonly outer: Buffer
  private readonly oneShot: boolean

  constructor (private readonly key: Buffer) {
    const k = key.length > BLOCK ? createHash('sha256').update(key).digest() : key
    this.inner = Buffer.alloc(BLOCK + ROOM, 0x36)
    this.outer = Buffer.alloc(BLOCK + DIGEST, 0x5c)
    for (let i = 0; i < k.length; i++) {
      this.inner[i] = (this.inner[i] as number) ^ (k[i] as number)
      this.outer[i] = (this.outer[i] as number) ^ (k[i] as number)
    }
    this.oneShot = oneShotWorks()
  }

  /** The HMAC-SHA256 of `message` under this key: 32 bytes of its own. */
  mac (message: Uint8Array): Buffer {
    if (!this.oneShot) return createHmac('sha256', this.key).update(message).digest()
    return onePass(this.inner, this.outer, message)
  }

  /** Whether `signature` is the MAC of `message`, compared in constant time. */
  verify (message: Uint8Array, signature: Uint8Array): boolean {
    const expected = this.mac(message)
    return expected.length === signature.length && timingSafeEqual(expected, signature)
  }
}

function onePass (inner: Buffer, outer: Buffer, message: Uint8Array): Buffer {
  let innerDigest: Buffer
  if (message.length <= ROOM) {
    inner.set(message, BLOCK)
    innerDigest = hash('sha256', inner.subarray(0, BLOCK + message.length), 'buffer')
  } else {
    innerDigest = hash('sha256', Buffer.concat([inner.subarray(0, BLOCK), message]), 'buffer')
  }
  outer.set(innerDigest, BLOCK)
  return hash('sha256', outer, 'buffer')
}

let checked: boolean | undefined
/** Whether `crypto.hash` exists and gives RFC 4231's answer and createHmac's (checked once). */
function oneShotWorks (): boolean {
  if (checked !== undefined) return checked
  try {
    const k = KNOWN.key
    const inner = Buffer.alloc(BLOCK + ROOM, 0x36)
    const outer = Buffer.alloc(BLOCK + DIGEST, 0x5c)
    for (let i = 0; i < k.length; i++) {
      inner[i] = (inner[i] as number) ^ (k[i] as number)
      outer[i] = (outer[i] as number) ^ (k[i] as number)
    }
    const mac = onePass(inner, outer, KNOWN.data)
    checked = typeof hash === 'function' && mac.toString('hex') === KNOWN.mac && mac.equals(createHmac('sha256', k).update(KNOWN.data).digest())
  } catch {
    checked = false
  }
  return checked
}

/** For tests: whether MACs are made by one-shot hashes (else by createHmac). */
export const usesOneShotHash = (): boolean => oneShotWorks()
