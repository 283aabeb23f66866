import { createHash, createHmac } from 'node:crypto'
import { BSON, Int32, Long, ObjectId } from 'mongodb'
import t from 'tap'
import { CursorCodec } from '../../list-endpoint/cursor.js'

const binding = { path: 'sessions / p1', filter: '{}', sort: '{"start":1,"_id":1}', fields: '*' }
const oldKey = Buffer.from('o'.repeat(32))
const newKey = Buffer.from('n'.repeat(32))

t.test('a cursor is signed with HMAC-SHA256 of its bytes', async (t) => {
  const codec = new CursorCodec([newKey])
  const [payload, signature] = codec.encode(binding, [1]).split('.') as [string, string]
  t.equal(signature, createHmac('sha256', newKey).update(Buffer.from(payload, 'base64url')).digest('base64url'),
    'a cursor is signed with HMAC-SHA256 of its bytes')
})

t.test('a signature is createHmac over the payload with the key, ' +
  'for keys shorter and longer than its block', async (t) => {
  // Cursors signed before the service used createHmac (the same HMAC-SHA256, built by hand) read on.
  for (const key of [Buffer.from('k'), Buffer.from('k'.repeat(64)), Buffer.from('k'.repeat(200))]) {
    const codec = new CursorCodec([key])
    const [payload, signature] = codec.encode(binding, [new ObjectId()]).split('.') as [string, string]
    const bytes = Buffer.from(payload, 'base64url')
    t.equal(signature, createHmac('sha256', key).update(bytes).digest('base64url'),
      `a key of ${key.length} bytes signs`)
    const signedElsewhere = `${payload}.${createHmac('sha256', key).update(bytes).digest('base64url')}`
    t.match(codec.decode(signedElsewhere, binding), { ok: true }, `a key of ${key.length} bytes verifies`)
  }
})

t.test('key rotation: the first key signs, every key verifies', async (t) => {
  const issuedBefore = new CursorCodec([oldKey])
    .encode(binding, [new Date('2024-06-01T10:00:00Z'), new ObjectId('665f1c2e9b1d4a3f5c7e8a90')])
  const rotated = new CursorCodec([newKey, oldKey])
  const reading = rotated.decode(issuedBefore, binding)
  t.match(reading, { ok: true })
  if (reading.ok) {
    t.same(reading.values[0], new Date('2024-06-01T10:00:00Z'), 'dates come back as dates')
    t.ok(reading.values[1] instanceof ObjectId, 'ObjectIds as ObjectIds')
  }
  t.match(new CursorCodec([newKey]).decode(issuedBefore, binding), { ok: false, code: 'INVALID_CURSOR' },
    'a retired key no longer verifies')
  const issuedAfter = rotated.encode(binding, [null, new ObjectId()])
  t.match(new CursorCodec([newKey]).decode(issuedAfter, binding), { ok: true },
    'new cursors are signed with the first key')
})

t.test('a feed token the service cannot read tells its client to start again without since', async (t) => {
  const token = new CursorCodec([oldKey]).encode(binding, [1])
  const codec = new CursorCodec([newKey])
  const advice = /start again without since, and replace the copy with what the feed lists/
  t.match(codec.decode(token, binding, 'since'),
    { ok: false, code: 'INVALID_CURSOR', message: /signed with another key \(after a restart without CURSOR_SECRET/ },
    'another key')
  t.match(codec.decode(token, binding, 'since'), { message: advice })
  t.match(codec.decode('not a token', binding, 'since'), { ok: false, code: 'INVALID_CURSOR', message: advice },
    'not one at all')
  t.match(codec.decode(token, binding),
    { ok: false, message: 'after is not a cursor of this service, or it was altered' },
    'a list\'s cursor says what it said')
})

t.test('a mismatch names what changed', async (t) => {
  const codec = new CursorCodec([newKey])
  const cursor = codec.encode(binding, [1, new ObjectId()])
  t.match(codec.decode(cursor, { ...binding, sort: '{"start":-1,"_id":1}', fields: 'name' }),
    { ok: false, code: 'CURSOR_MISMATCH', message: /sort \(or the collation it ran in\), fields differ/ })
  t.match(codec.decode(cursor, { ...binding, path: 'sessions / p2' }),
    { ok: false, code: 'CURSOR_MISMATCH', message: /path differs/ })
  t.match(codec.decode(cursor, { ...binding, fields: 'name' }),
    { ok: false, code: 'CURSOR_MISMATCH', message: /its fields differ from/ }, 'fields are plural')
})

t.test('values come back exactly as stored: an int64 beyond 2^53 stays one, ' +
  'an int32 and a double keep their types', async (t) => {
  const codec = new CursorCodec([newKey])
  const values = [Long.fromString('9007199254740993'), new Int32(7), new BSON.Double(7), 'text', null]
  const reading = codec.decode(codec.encode(binding, values), binding)
  t.match(reading, { ok: true })
  if (reading.ok) {
    t.equal(Buffer.compare(BSON.serialize({ ...reading.values }), BSON.serialize({ ...values })), 0,
      'the same BSON, byte for byte')
  }
  t.match(codec.decode(codec.encode(binding, [undefined]), binding), { ok: true, values: [null] },
    'a missing value is null, as MongoDB sorts it')
})

t.test('a cursor is short: one ObjectId and the signature in ~120 characters', async (t) => {
  const cursor = new CursorCodec([newKey]).encode(binding, [new ObjectId()])
  t.ok(cursor.length <= 120, `${cursor.length} characters`)
  t.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/, 'base64url, then the whole 32-byte HMAC-SHA256')
})

t.test('a cursor of the previous format (JSON, signed as text) is still read, ' +
  'so that a walk survives an upgrade', async (t) => {
  const short = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16)
  const id = new ObjectId()
  const payload = Buffer.from(JSON.stringify({
    v: 1,
    b: [binding.path, binding.filter, binding.sort, binding.fields].map(short),
    k: BSON.EJSON.serialize([new Date('2024-06-01T10:00:00Z'), id], { relaxed: false })
  })).toString('base64url')
  const version1 = `${payload}.${createHmac('sha256', newKey).update(payload).digest('base64url')}`
  const codec = new CursorCodec([newKey])
  t.match(codec.decode(version1, binding), { ok: true, values: [new Date('2024-06-01T10:00:00Z'), id] })
  t.match(codec.decode(version1, { ...binding, filter: '{"x":1}' }),
    { ok: false, code: 'CURSOR_MISMATCH', message: /filter differs/ })
  t.match(new CursorCodec([oldKey]).decode(version1, binding), { ok: false, code: 'INVALID_CURSOR' },
    'and still only with a key that signed it')
})

t.test('an altered byte anywhere is refused', async (t) => {
  const codec = new CursorCodec([newKey])
  const cursor = codec.encode(binding, [new Date('2024-06-01T10:00:00Z'), new ObjectId()])
  // Every character, to each of two others: the last of each base64url part carries unused bits, which count too.
  for (let at = 0; at < cursor.length; at++) {
    if (cursor[at] === '.') continue
    for (const other of ['A', 'B', '_']) {
      if (other === cursor[at]) continue
      const altered = cursor.slice(0, at) + other + cursor.slice(at + 1)
      const reading = codec.decode(altered, binding)
      if (reading.ok || reading.code !== 'INVALID_CURSOR') t.fail(`${altered}: character ${at} → ${other} was read`)
    }
  }
  t.match(codec.decode(cursor, binding), { ok: true }, 'the cursor itself is read')
})
