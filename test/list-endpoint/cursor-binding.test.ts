import t from 'tap'
import { parseCollation } from '../../database/collation.js'
import { collationSuffix, CursorCodec, fieldsKey, type CursorBinding } from '../../list-endpoint/cursor.js'

const MISMATCH = { ok: false, code: 'CURSOR_MISMATCH' }
const codec = new CursorCodec([Buffer.from('k'.repeat(32))])
const bound = (fields: string[] | undefined, collation = 'simple'): CursorBinding => ({
  path: 'sessions /projects/p1/sessions p1',
  filter: '{}',
  sort: '{"start":1,"_id":1}' + collationSuffix(parseCollation(collation)),
  fields: fieldsKey(fields)
})

t.test('the same fields asked for in another order continue the same walk', async (t) => {
  const cursor = codec.encode(bound(['name', 'start']), [1])
  t.match(codec.decode(cursor, bound(['start', 'name'])), { ok: true }, 'fields=start,name continues fields=name,start')
  t.match(codec.decode(cursor, bound(['_id', 'start', 'name'])), { ok: true }, '_id named or not: it is always there')
  t.match(codec.decode(cursor, bound(['name'])), MISMATCH, 'fewer fields are another query')
  t.match(codec.decode(cursor, bound(undefined)), MISMATCH, 'every field is another query')
  t.equal(fieldsKey(undefined), '*', 'no fields parameter binds to every field')
})

t.test('a cursor written under one collation is refused under another, and read under the same', async (t) => {
  t.equal(collationSuffix(undefined), '', 'without a collation the sort is bound as it is')
  const french = codec.encode(bound(undefined, 'fr'), ['é'])
  t.match(codec.decode(french, bound(undefined, 'fr')), { ok: true }, 'the same collation reads it')
  t.match(codec.decode(french, bound(undefined, 'en')), MISMATCH, 'another locale refuses it')
  t.match(codec.decode(french, bound(undefined, 'fr,strength=2')), MISMATCH, 'another strength refuses it')
  t.match(codec.decode(french, bound(undefined)), MISMATCH, 'no collation refuses it')
})
