// HMAC-SHA256 (RFC 2104) from node:crypto's one-shot hash(), with the key's two padded blocks
// made once per key: the service signs a cursor on every page with a next one, and createHmac
// costs measurably more per page (docs/performance.md). test/list-endpoint/hmac-sha256.test.ts
// holds it equal to createHmac for every key length and message.
import { createHash, hash } from 'node:crypto'

/** SHA-256's block: a longer key is hashed first, a shorter one padded with zeros (RFC 2104, 2). */
const BLOCK = 64

export class HmacSha256 {
  private readonly inner: Buffer
  private readonly outer: Buffer

  constructor (key: Uint8Array) {
    const block = Buffer.alloc(BLOCK)
    block.set(key.length > BLOCK ? createHash('sha256').update(key).digest() : key)
    this.inner = Buffer.from(block.map((byte) => byte ^ 0x36))
    this.outer = Buffer.from(block.map((byte) => byte ^ 0x5c))
  }

  /** H(K ⊕ opad ‖ H(K ⊕ ipad ‖ message)). */
  sign (message: Uint8Array): Buffer {
    return hash('sha256', this.outerMessage(message), 'buffer')
  }

  /** The signature as base64url text, made as text (no Buffer to convert). */
  signBase64url (message: Uint8Array): string {
    return hash('sha256', this.outerMessage(message), 'base64url')
  }

  private outerMessage (message: Uint8Array): Buffer {
    return Buffer.concat([this.outer, hash('sha256', Buffer.concat([this.inner, message]), 'buffer')])
  }
}
