// A resume token's cluster time is read from its assumed layout only while the events' own
// clusterTime confirms it: from the first event that disagrees, no token gives a time.
import { Timestamp } from 'mongodb'
import t from 'tap'
import { clusterTimeOf, fromTimestamp, tokenLayoutBroken, trustTokenLayout } from '../../changes/cluster-time.js'

const token = (time: Timestamp) => ({ _data: `82${fromTimestamp(time).toString(16).padStart(16, '0')}0100` })

t.test('tokens give their time while events confirm the layout, and none once one does not', async (t) => {
  // The layout is the process's: other test files of the unit group read times after this one.
  t.teardown(trustTokenLayout)
  const at = new Timestamp({ t: 1_700_000_000, i: 7 })
  t.equal(clusterTimeOf(token(at)), fromTimestamp(at), 'the time of a token in the layout')
  t.equal(clusterTimeOf({ _data: '91ABCD' }), undefined, 'a token of another shape gives none')
  t.equal(tokenLayoutBroken(token(at), at), false, 'an event whose token holds its clusterTime')
  t.equal(tokenLayoutBroken({ _data: '91ABCD' }, at), false, 'a token of another shape says nothing of the layout')
  t.equal(tokenLayoutBroken(token(at), undefined), false, 'nor does an event without a clusterTime')
  t.equal(clusterTimeOf(token(at)), fromTimestamp(at), 'times are still read')
  const later = new Timestamp({ t: 1_700_000_001, i: 1 })
  t.equal(tokenLayoutBroken(token(at), later), true, 'an event whose token holds another time: said once')
  t.equal(clusterTimeOf(token(at)), undefined, 'from then on no token gives a time')
  t.equal(tokenLayoutBroken(token(at), later), false, 'and it is not said again')
})

t.test('trusted again, tokens give their time again', async (t) => {
  const at = new Timestamp({ t: 1_700_000_002, i: 3 })
  t.equal(clusterTimeOf(token(at)), fromTimestamp(at))
})
