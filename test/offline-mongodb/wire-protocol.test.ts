// The stand-in cuts a connection's bytes into messages whatever the chunks: a message split
// anywhere (its length field too), several in one chunk, and a length no message can have.
import fc from 'fast-check'
import t from 'tap'
import { MessageFramer } from '../../offline-mongodb/wire-protocol.js'

/** A message of `length` bytes (at least 16, as the header is), its bytes marked with `mark`. */
function message (length: number, mark: number): Buffer {
  const bytes = Buffer.alloc(length, mark)
  bytes.writeInt32LE(length, 0)
  return bytes
}

t.test('messages come out whole and in order, however the stream is cut', async (t) => {
  fc.assert(fc.property(
    fc.array(fc.integer({ min: 16, max: 300 }), { minLength: 1, maxLength: 8 }),
    fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 40 }),
    (lengths, cuts) => {
      const messages = lengths.map((length, i) => message(length, i + 1))
      const stream = Buffer.concat(messages)
      const framer = new MessageFramer()
      const out: Buffer[] = []
      for (let offset = 0, i = 0; offset < stream.length; i++) {
        const size = cuts[i % cuts.length] as number
        out.push(...framer.push(stream.subarray(offset, offset + size)))
        offset += size
      }
      return out.length === messages.length && out.every((got, i) => got.equals(messages[i] as Buffer))
    }
  ), { numRuns: 300 })
})

t.test('nothing is given before a message is complete', async (t) => {
  const framer = new MessageFramer()
  const whole = message(40, 7)
  t.same(framer.push(whole.subarray(0, 2)), [], 'half a length field')
  t.same(framer.push(whole.subarray(2, 39)), [], 'all but one byte')
  t.same(framer.push(whole.subarray(39)), [whole], 'the last byte completes it')
})

t.test('a length shorter than a header is refused', async (t) => {
  const bad = Buffer.alloc(20)
  bad.writeInt32LE(8, 0)
  t.throws(() => new MessageFramer().push(bad), /invalid message length 8/)
  const split = new MessageFramer()
  t.same(split.push(bad.subarray(0, 3)), [])
  t.throws(() => split.push(bad.subarray(3)), /invalid message length 8/, 'also when the length field is split')
})
