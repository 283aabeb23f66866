// The cursors' HMAC checks node:crypto's hash() (a release candidate in Node's docs) against a
// known answer before composing from it, and signs with createHmac where it would not agree.
import { createHmac } from 'node:crypto'
import t from 'tap'
import { HmacSha256, oneShotHashAgrees } from '../../list-endpoint/hmac-sha256.js'

t.test('on this Node, hash() gives RFC 4231\'s answer: signatures are composed from it', async (t) => {
  t.equal(oneShotHashAgrees(), true)
})

t.test('signing through createHmac gives the same signatures', async (t) => {
  for (const length of [0, 1, 63, 64, 65, 200]) {
    const key = Buffer.alloc(length, 3)
    const composed = new HmacSha256(key, true)
    const fallback = new HmacSha256(key, false)
    for (const message of [Buffer.alloc(0), Buffer.from('cursor bytes'), Buffer.alloc(700, 9)]) {
      const expected = createHmac('sha256', key).update(message).digest()
      t.same(fallback.sign(message), expected, `a key of ${length} bytes, a message of ${message.length}`)
      t.equal(fallback.signBase64url(message), expected.toString('base64url'))
      t.same(composed.sign(message), expected)
    }
  }
})
