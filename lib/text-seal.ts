// What a client carries but must neither read nor change (an ETag's change-stream point, a feed's
// token: both move with every project's writes): AES-256-GCM from node:crypto, under keys derived with
// HKDF from CURSOR_SECRET's, so that every replica opens what another sealed. Each seal takes a
// random nonce: two seals of the same text differ, and tell nothing of whether it changed.
import { createCipheriv, createDecipheriv, hkdfSync, randomFillSync } from 'node:crypto'

const NONCE = 12
const TAG = 16
const INFO = 'listing-api sealed text v1'

export class TextSeal {
  private readonly keys: Buffer[]

  /** `secrets`: the first seals, every one opens (a key being rotated out). */
  constructor (secrets: readonly Uint8Array[]) {
    if (secrets.length === 0) throw new Error('a seal needs at least one key')
    this.keys = secrets.map((secret) => Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), INFO, 32)))
  }

  /** `data` (text as UTF-8) sealed, as base64url; `bound` is authenticated with it (associated data), not carried. */
  seal (data: string | Uint8Array, bound: string): string {
    const nonce = randomFillSync(Buffer.allocUnsafe(NONCE))
    const cipher = createCipheriv('aes-256-gcm', this.keys[0] as Buffer, nonce)
    cipher.setAAD(Buffer.from(bound))
    const plain = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    return Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]).toString('base64url')
  }

  /** The bytes `sealed` holds, when one of the keys sealed them with this `bound`; else undefined. */
  open (sealed: string, bound: string): Buffer | undefined {
    const bytes = Buffer.from(sealed, 'base64url')
    if (bytes.length <= NONCE + TAG) return undefined
    for (const key of this.keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, NONCE), { authTagLength: TAG })
        decipher.setAAD(Buffer.from(bound))
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG))
        return Buffer.concat([decipher.update(bytes.subarray(NONCE, bytes.length - TAG)), decipher.final()])
      } catch {
        // Another key's, altered, or bound to something else: the next key, then none.
      }
    }
    return undefined
  }
}
