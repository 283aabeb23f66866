import { ObjectId } from 'mongodb'
import t from 'tap'
import { CursorCodec } from '../../list-endpoint/cursor.js'

const binding = { path: 'sessions / p1', filter: '{}', sort: '{"start":1,"_id":1}', fields: '*' }
const oldKey = Buffer.from('o'.repeat(32))
const newKey = Buffer.from('n'.repeat(32))

t.test('key rotation: the first key signs, every key verifies', async (t) => {
  const issuedBefore = new CursorCodec([oldKey]).encode(binding, [new Date('2024-06-01T10:00:00Z'), new ObjectId('665f1c2e9b1d4a3f5c7e8a90')])
  const rotated = new CursorCodec([newKey, oldKey])
  const reading = rotated.decode(issuedBefore, binding)
  t.match(reading, { ok: true })
  if (reading.ok) {
    t.same(reading.values[0], new Date('2024-06-01T10:00:00Z'), 'dates come back as dates')
    t.ok(reading.values[1] instanceof ObjectId, 'ObjectIds as ObjectIds')
  }
  t.match(new CursorCodec([newKey]).decode(issuedBefore, binding), { ok: false, code: 'INVALID_CURSOR' }, 'a retired key no longer verifies')
  const issuedAfter = rotated.encode(binding, [null, new ObjectId()])
  t.match(new CursorCodec([newKey]).decode(issuedAfter, binding), { ok: true }, 'new cursors are signed with the first key')
})

t.test('a mismatch names what changed', async (t) => {
  const codec = new CursorCodec([newKey])
  const cursor = codec.encode(binding, [1, new ObjectId()])
  t.match(codec.decode(cursor, { ...binding, sort: '{"start":-1,"_id":1}', fields: 'name' }), { ok: false, code: 'CURSOR_MISMATCH', message: /sort, fields differ/ })
  t.match(codec.decode(cursor, { ...binding, path: 'sessions / p2' }), { ok: false, code: 'CURSOR_MISMATCH', message: /path differs/ })
})
