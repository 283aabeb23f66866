// The cursors' HMAC is RFC 2104's, as node:crypto's createHmac computes it, for every key length
// (shorter than SHA-256's 64-byte block, equal to it, longer, empty) and every message.
import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import t from 'tap'
import { HmacSha256 } from '../../list-endpoint/hmac-sha256.js'

t.test('equal to createHmac for random keys and messages', async (t) => {
  const keys = fc.uint8Array({ maxLength: 200 })
  const messages = fc.uint8Array({ maxLength: 300 })
  t.doesNotThrow(() => fc.assert(fc.property(keys, messages, (key, message) => {
    const expected = createHmac('sha256', key).update(message).digest()
    const signer = new HmacSha256(key)
    return signer.sign(message).equals(expected) && signer.signBase64url(message) === expected.toString('base64url')
  }), { numRuns: 2000 }), '2000 keys and messages')
})

t.test('one key signing messages of every length in turn, longer and shorter than the last', async (t) => {
  fc.assert(fc.property(
    fc.uint8Array({ maxLength: 100 }),
    fc.array(fc.uint8Array({ maxLength: 700, size: 'max' }), { minLength: 2, maxLength: 12 }),
    (key, messages) => {
      const signer = new HmacSha256(key)
      return messages.every((message) => {
        const expected = createHmac('sha256', key).update(message).digest()
        return signer.signBase64url(message) === expected.toString('base64url') && signer.sign(message).equals(expected)
      })
    }
  ), { numRuns: 300 })
  const key = Buffer.from('a key')
  const lengths = new HmacSha256(key)
  for (const length of [0, 255, 256, 257, 600, 10, 1500, 3]) {
    const message = Buffer.alloc(length, length % 251)
    t.equal(lengths.signBase64url(message), createHmac('sha256', key).update(message).digest('base64url'),
      `a message of ${length} bytes after the others`)
  }
  const signer = new HmacSha256(Buffer.from('k'))
  const first = signer.sign(Buffer.from('a'))
  const kept = Buffer.from(first)
  signer.sign(Buffer.alloc(500, 1))
  t.same(first, kept, 'a signature given out is not overwritten by the next')
})

t.test('the block edges, and one key signing many messages', async (t) => {
  const message = Buffer.from('cursor bytes')
  for (const length of [0, 1, 63, 64, 65, 128]) {
    const key = Buffer.alloc(length, 7)
    t.same(new HmacSha256(key).sign(message), createHmac('sha256', key).update(message).digest(),
      `a key of ${length} bytes`)
    t.equal(new HmacSha256(key).signBase64url(message), createHmac('sha256', key).update(message).digest('base64url'),
      `as text, a key of ${length} bytes`)
  }
  const signer = new HmacSha256(Buffer.from('k'))
  const first = signer.sign(Buffer.from('a'))
  signer.sign(Buffer.from('something else'))
  t.same(signer.sign(Buffer.from('a')), first, 'signing leaves the key as it was')
})
