// HMAC-SHA256 (RFC 2104) from node:crypto's one-shot hash(), with the key's two padded blocks
// made once per key: the service signs a cursor on every page with a next one, and createHmac
// costs more per signature (docs/performance.md, "Why it is fast" ("Signatures from two hashes")).
// test/list-endpoint/hmac-sha256.test.ts holds it equal to createHmac for every key and message;
// where hash() fails a known answer at start, createHmac signs.
import { createHash, createHmac, hash } from 'node:crypto'

/** SHA-256's block: a longer key is hashed first, a shorter one padded with zeros (RFC 2104, 2). */
const BLOCK = 64
/** A signature's bytes. */
export const DIGEST = 32

/**
 * Whether HMACs composed from hash() give RFC 4231's answer to its test case 2: hash() is a
 * release candidate in Node's docs, so on a Node where they do not, createHmac signs.
 */
export function oneShotHashAgrees (): boolean {
  const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'
  const message = Buffer.from('what do ya want for nothing?')
  try {
    const signer = new HmacSha256(Buffer.from('Jefe'), true)
    return signer.sign(message).toString('hex') === expected &&
      signer.signBase64url(message) === Buffer.from(expected, 'hex').toString('base64url')
  } catch {
    return false
  }
}

export class HmacSha256 {
  private static oneShot: boolean | undefined
  /** The key, for createHmac when hash() is not used. */
  private readonly key: Buffer | undefined
  /** K ⊕ ipad, then the message: grown as messages need, rewritten from the block on at each signature. */
  private inner: Buffer
  /** K ⊕ opad, then the inner digest. */
  private readonly outer = Buffer.alloc(BLOCK + DIGEST)

  /** `oneShot`: compose from hash() (where it gives RFC 4231's answer, checked once), or call createHmac. */
  constructor (key: Uint8Array, oneShot = HmacSha256.oneShot ??= oneShotHashAgrees()) {
    this.inner = Buffer.alloc(oneShot ? BLOCK + 256 : 0)
    if (!oneShot) {
      this.key = Buffer.from(key)
      return
    }
    this.key = undefined
    const block = Buffer.alloc(BLOCK)
    block.set(key.length > BLOCK ? createHash('sha256').update(key).digest() : key)
    for (let i = 0; i < BLOCK; i++) {
      this.inner[i] = (block[i] as number) ^ 0x36
      this.outer[i] = (block[i] as number) ^ 0x5c
    }
  }

  /** H(K ⊕ opad ‖ H(K ⊕ ipad ‖ message)). */
  sign (message: Uint8Array): Buffer {
    if (this.key !== undefined) return createHmac('sha256', this.key).update(message).digest()
    return hash('sha256', this.outerMessage(message), 'buffer')
  }

  /** The signature as base64url text, made as text (no Buffer to convert). */
  signBase64url (message: Uint8Array): string {
    if (this.key !== undefined) return createHmac('sha256', this.key).update(message).digest('base64url')
    return hash('sha256', this.outerMessage(message), 'base64url')
  }

  // hash() reads its input before it returns, so both messages are written into buffers kept for
  // the next signature; the inner digest is asked for as 'binary' (latin1) text, which hash()
  // makes at less cost than a Buffer (docs/performance.md, "Signatures from two hashes").
  private outerMessage (message: Uint8Array): Buffer {
    if (this.inner.length < BLOCK + message.length) {
      const grown = Buffer.alloc(BLOCK + 2 * message.length)
      this.inner.copy(grown, 0, 0, BLOCK)
      this.inner = grown
    }
    this.inner.set(message, BLOCK)
    this.outer.write(hash('sha256', this.inner.subarray(0, BLOCK + message.length), 'binary'), BLOCK, 'latin1')
    return this.outer
  }
}
