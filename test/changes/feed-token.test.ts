// A feed's token: it holds MongoDB's resume token once, the identity of the collection's history,
// and stays within the length a `since` may have for the document keys docs/changes.md names.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { CursorCodec } from '../../list-endpoint/cursor.js'
import { FEED_SORT, decodeToken, encodeToken } from '../../changes/feed-token.js'
import { TextSeal } from '../../lib/text-seal.js'

const binding = {
  path: 'sessions /projects/:projectId/sessions/changes 65cd7e3007370d3300000000',
  filter: '{}',
  sort: FEED_SORT,
  fields: '*'
}
const secret = randomBytes(32)
const codec = new CursorCodec([secret])
const seal = new TextSeal([secret])
const identity = randomBytes(16).toString('hex')
/** The most `since` may hold (list-endpoint/cursor.ts). */
const LIMIT = 4096

t.test('an event\'s resume token with a 1 KiB document key: ' +
  'the token holds it once and stays under the limit', async (t) => {
  // An event's _data: the cluster time, then the event's identifiers and the document key in
  // KeyString form (about its BSON size; a quarter more here, to be safe), as hex.
  const data = `82${'65F0A1B2'}00000001${randomBytes(Math.ceil(1024 * 1.25) + 64).toString('hex').toUpperCase()}`
  const point = { resumeToken: { _data: data }, after: data, epoch: 'AbCdEfGh', seq: 12345 }
  const token = encodeToken(codec, seal, binding, { phase: 'following', point }, identity)
  t.ok(token.length <= LIMIT, `${token.length} characters`)
  const read = decodeToken(codec, seal, binding, token)
  t.match(read, { ok: true, identity, position: { phase: 'following', point } },
    'it reads back whole, its after included')
})

t.test('a point whose resume token moved past its last change keeps both', async (t) => {
  const point = { resumeToken: { _data: '8265F0A1B200000002' }, after: '8265F0A1B2000000010123' }
  const read = decodeToken(codec, seal, binding,
    encodeToken(codec, seal, binding, { phase: 'listing', start: point, lastId: 'x' }, null))
  t.match(read, { ok: true, identity: null, position: { phase: 'listing', start: point, lastId: 'x' } })
})

t.test('tokens issued before identities were written are read, with no identity', async (t) => {
  const old = codec.encode(binding, ['f', { _data: '8265F0A1B200000002' }, null, null, null, null])
  t.match(decodeToken(codec, seal, binding, old), { ok: true, identity: null, position: { phase: 'following' } })
  const forged = codec.encode(binding, ['f', { _data: '8265F0A1B200000002' }, null, null, null, null, 42])
  t.match(decodeToken(codec, seal, binding, forged), { ok: false, code: 'INVALID_CURSOR' }, 'an identity must be text')
})

t.test('a token is sealed: nothing of its point shows, an altered one is refused, one of before is read',
  async (t) => {
    const point = { resumeToken: { _data: '8265F0A1B200000002' } }
    const token = encodeToken(codec, seal, binding, { phase: 'following', point }, identity)
    t.match(token, /^[A-Za-z0-9_-]+$/, 'one base64url text')
    t.notMatch(Buffer.from(token, 'base64url').toString('latin1'), /8265F0A1B2|_data/, 'the point does not show')
    t.not(encodeToken(codec, seal, binding, { phase: 'following', point }, identity), token,
      'two tokens of the same point differ: whether it moved does not show')
    const bytes = Buffer.from(token, 'base64url')
    bytes[20] = (bytes[20] as number) ^ 1
    t.match(decodeToken(codec, seal, binding, bytes.toString('base64url')), { ok: false, code: 'INVALID_CURSOR' })
    const other = new TextSeal([randomBytes(32)])
    t.match(decodeToken(codec, other, binding, token), { ok: false, code: 'INVALID_CURSOR' }, 'another key')
    const before = codec.encode(binding, ['f', point.resumeToken, null, null, null, null, identity])
    t.match(decodeToken(codec, seal, binding, before), { ok: true, identity, position: { phase: 'following', point } },
      'a token of before, signed but not sealed, is read')
  })
