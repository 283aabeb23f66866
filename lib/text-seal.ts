// What a client carries but must neither read nor change (an ETag's change-stream point, a feed's
// token: both move with every project's writes): AES-256-GCM from node:crypto, so that every
// replica opens what another sealed. Each seal takes a random nonce: two seals of the same text
// differ, and tell nothing of whether it changed. Random 96-bit nonces stay safe for 2^32 seals
// of one key (NIST SP 800-38D, 8.3): each key here is derived with HKDF from CURSOR_SECRET's and
// a random salt, carried in the sealed text, and a new salt is drawn every 2^30 seals.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, randomFillSync } from 'node:crypto'
import { RecentMap } from './recent-map.js'

const SALT = 16
const NONCE = 12
const TAG = 16
const INFO = 'listing-api sealed text v1'
const SEALS_PER_KEY = 2 ** 30

const derive = (secret: Uint8Array, salt: Uint8Array): Buffer => Buffer.from(hkdfSync('sha256', secret, salt, INFO, 32))

export class TextSeal {
  private readonly secrets: Uint8Array[]
  private salt = randomBytes(SALT)
  private key: Buffer
  private sealed = 0
  /** Keys derived for the salts met lately (each replica's, a few): no HKDF per opening. */
  private readonly derived = new RecentMap<Buffer[]>(64)

  /** `secrets`: the first seals, every one opens (a key being rotated out). */
  constructor (secrets: readonly Uint8Array[], private readonly sealsPerKey = SEALS_PER_KEY) {
    if (secrets.length === 0) throw new Error('a seal needs at least one key')
    this.secrets = [...secrets]
    this.key = derive(this.secrets[0] as Uint8Array, this.salt)
  }

  /** `data` (text as UTF-8) sealed, as base64url; `bound` is authenticated with it (associated data), not carried. */
  seal (data: string | Uint8Array, bound: string): string {
    if (++this.sealed > this.sealsPerKey) {
      this.salt = randomBytes(SALT)
      this.key = derive(this.secrets[0] as Uint8Array, this.salt)
      this.sealed = 1
    }
    const nonce = randomFillSync(Buffer.allocUnsafe(NONCE))
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce)
    cipher.setAAD(Buffer.from(bound))
    const plain = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    return Buffer.concat([this.salt, nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()])
      .toString('base64url')
  }

  /** The bytes `sealed` holds, when one of the keys sealed them with this `bound`; else undefined. */
  open (sealed: string, bound: string): Buffer | undefined {
    const bytes = Buffer.from(sealed, 'base64url')
    // Only the one text of the bytes is a seal: a character added or changed that decoding drops is not.
    if (bytes.length <= SALT + NONCE + TAG || bytes.toString('base64url') !== sealed) return undefined
    const salt = bytes.subarray(0, SALT)
    const text = salt.toString('base64url')
    let keys = this.derived.get(text)
    if (keys === undefined) {
      keys = this.secrets.map((secret) => derive(secret, salt))
      this.derived.set(text, keys)
    }
    const nonce = bytes.subarray(SALT, SALT + NONCE)
    for (const key of keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG })
        decipher.setAAD(Buffer.from(bound))
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG))
        return Buffer.concat([decipher.update(bytes.subarray(SALT + NONCE, bytes.length - TAG)), decipher.final()])
      } catch {
        // Another key's, altered, or bound to something else: the next key, then none.
      }
    }
    return undefined
  }
}
