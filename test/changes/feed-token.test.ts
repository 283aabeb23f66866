// A feed's token: it holds MongoDB's resume token once, the identity of the collection's history,
// and stays within the length a `since` may have for the document keys docs/changes.md names.
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { CursorCodec } from '../../list-endpoint/cursor.js'
import { FEED_SORT, decodeToken, encodeToken } from '../../changes/feed-token.js'

const binding = {
  path: 'sessions /projects/:projectId/sessions/changes 65cd7e3007370d3300000000',
  filter: '{}',
  sort: FEED_SORT,
  fields: '*'
}
const codec = new CursorCodec([randomBytes(32)])
const identity = randomBytes(16).toString('hex')
/** The most `since` may hold (list-endpoint/cursor.ts). */
const LIMIT = 4096

t.test('an event\'s resume token with a 1 KiB document key: ' +
  'the token holds it once and stays under the limit', async (t) => {
  // An event's _data: the cluster time, then the event's identifiers and the document key in
  // KeyString form (about its BSON size; a quarter more here, to be safe), as hex.
  const data = `82${'65F0A1B2'}00000001${randomBytes(Math.ceil(1024 * 1.25) + 64).toString('hex').toUpperCase()}`
  const point = { resumeToken: { _data: data }, after: data, epoch: 'AbCdEfGh', seq: 12345 }
  const token = encodeToken(codec, binding, { phase: 'following', point }, identity)
  t.ok(token.length <= LIMIT, `${token.length} characters`)
  const read = decodeToken(codec, binding, token)
  t.match(read, { ok: true, identity, position: { phase: 'following', point } },
    'it reads back whole, its after included')
})

t.test('a point whose resume token moved past its last change keeps both', async (t) => {
  const point = { resumeToken: { _data: '8265F0A1B200000002' }, after: '8265F0A1B2000000010123' }
  const read = decodeToken(codec, binding,
    encodeToken(codec, binding, { phase: 'listing', start: point, lastId: 'x' }, null))
  t.match(read, { ok: true, identity: null, position: { phase: 'listing', start: point, lastId: 'x' } })
})

t.test('tokens issued before identities were written are read, with no identity', async (t) => {
  const old = codec.encode(binding, ['f', { _data: '8265F0A1B200000002' }, null, null, null, null])
  t.match(decodeToken(codec, binding, old), { ok: true, identity: null, position: { phase: 'following' } })
  const forged = codec.encode(binding, ['f', { _data: '8265F0A1B200000002' }, null, null, null, null, 42])
  t.match(decodeToken(codec, binding, forged), { ok: false, code: 'INVALID_CURSOR' }, 'an identity must be text')
})
