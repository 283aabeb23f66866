// Cursor signatures are HMAC-SHA256 exactly as RFC 4231 and node:crypto's createHmac give it,
// made from the platform's one-shot hash.
import { createHmac, randomBytes } from 'node:crypto'
import fc from 'fast-check'
import t from 'tap'
import { CursorMac, usesOneShotHash } from '../../list-endpoint/cursor-mac.js'

const reference = (key: Buffer, payload: Uint8Array): Buffer => createHmac('sha256', key).update(payload).digest()

t.test('RFC 4231 test vectors, keys shorter and longer than the block', async (t) => {
  const vectors: Array<[string, string, string]> = [
    ['0b'.repeat(20), Buffer.from('Hi There').toString('hex'), 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'],
    [Buffer.from('Jefe').toString('hex'), Buffer.from('what do ya want for nothing?').toString('hex'), '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'],
    ['aa'.repeat(20), 'dd'.repeat(50), '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe'],
    ['aa'.repeat(131), Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First').toString('hex'), '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54']
  ]
  for (const [key, data, mac] of vectors) t.equal(new CursorMac(Buffer.from(key, 'hex')).mac(Buffer.from(data, 'hex')).toString('hex'), mac)
  t.ok(usesOneShotHash(), 'this platform makes them with crypto.hash (createHmac otherwise)')
})

t.test('createHmac byte for byte, at every payload length around the blocks and beyond the prepared room', async (t) => {
  for (const length of [0, 1, 32, 63, 64, 65, 200]) {
    const key = randomBytes(length)
    const mac = new CursorMac(key)
    let differs = 0
    for (const size of [...Array.from({ length: 200 }, (_, i) => i), 1023, 1024, 1025, 5000]) {
      const payload = randomBytes(size)
      if (!mac.mac(payload).equals(reference(key, payload))) differs++
    }
    t.equal(differs, 0, `key of ${length} bytes`)
  }
})

t.test('random keys and payloads; verify refuses any other signature', async (t) => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 150 }), fc.uint8Array({ maxLength: 400 }), fc.nat({ max: 31 }), (key, payload, flip) => {
    const mac = new CursorMac(Buffer.from(key))
    const signature = mac.mac(payload)
    const altered = Buffer.from(signature)
    altered[flip] = (altered[flip] as number) ^ 1
    return signature.equals(reference(Buffer.from(key), payload)) && mac.verify(payload, signature) && !mac.verify(payload, altered) && !mac.verify(payload, signature.subarray(0, 31))
  }), { numRuns: 500 })
  t.pass('500 random keys and payloads agree')
})

t.test('a MAC is a buffer of its own: a later one does not overwrite it', async (t) => {
  const mac = new CursorMac(Buffer.from('k'.repeat(32)))
  const first = mac.mac(Buffer.from('cursor'))
  mac.mac(randomBytes(1000))
  const again = mac.mac(Buffer.from('cursor'))
  t.same(again, first)
  t.not(again, first)
})
