import { createHmac, randomBytes } from 'node:crypto'
import fc from 'fast-check'
import t from 'tap'
import { HmacSha256 } from '../../list-endpoint/hmac-sha256.js'

const reference = (key: Buffer, payload: Buffer | string): Buffer => createHmac('sha256', key).update(payload).digest()

t.test('HMAC-SHA256 byte for byte as node:crypto gives it, at every payload length across the block boundaries', async (t) => {
  // Keys shorter than, as long as, and longer than SHA-256's 64-byte block (hashed first).
  for (const length of [0, 1, 16, 32, 63, 64, 65, 200]) {
    const key = randomBytes(length)
    const hmac = new HmacSha256(key)
    let differs = 0
    // One and two padding blocks (55/56 bytes and their multiples of 64), several whole blocks.
    for (let size = 0; size <= 300; size++) {
      const payload = randomBytes(size)
      if (!hmac.mac(payload).equals(reference(key, payload))) differs++
    }
    t.equal(differs, 0, `key of ${length} bytes: payloads of 0 to 300 bytes`)
    t.same(hmac.mac(randomBytes(5000)).length, 32)
  }
})

t.test('random keys and payloads, strings as their UTF-8 bytes', async (t) => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 150 }), fc.uint8Array({ maxLength: 400 }), fc.string({ unit: 'grapheme', maxLength: 40 }), (key, payload, text) => {
    const hmac = new HmacSha256(Buffer.from(key))
    return hmac.mac(Buffer.from(payload)).equals(reference(Buffer.from(key), Buffer.from(payload))) &&
      hmac.mac(text).equals(reference(Buffer.from(key), text))
  }), { numRuns: 500 })
  t.pass('500 random keys and payloads agree')
})

t.test('the keyed states are reused, never consumed, and a MAC is a buffer of its own', async (t) => {
  const hmac = new HmacSha256(Buffer.from('k'.repeat(32)))
  const first = hmac.mac('cursor')
  hmac.mac(randomBytes(1000))
  const again = hmac.mac('cursor')
  t.same(again, first, 'the same payload, the same MAC, after other MACs')
  t.not(again, first, 'a new buffer each time: a later MAC does not overwrite an earlier one')
})
