// Retryable writes (manual: "Retryable Writes"): the same write of a session (lsid, txnNumber)
// sent again, as the driver does after a lost connection, gets the first answer and is not
// applied twice; an older txnNumber is TransactionTooOld (225).
import { Long, UUID } from 'mongodb'
import t from 'tap'
import { opMsg, rawConnection, standIn } from './stand-in.js'

t.test('a write sent again with its txnNumber is answered, not applied again', async (t) => {
  const { server, client } = await standIn(t)
  const { socket, replyTo } = await rawConnection(t, server.port)
  const lsid = { id: new UUID() }
  const insert = { insert: 'c', documents: [{ _id: 1 }], lsid, txnNumber: Long.fromNumber(1), $db: 'retry' }
  socket.write(opMsg(1, insert))
  t.match((await replyTo(1)).body, { n: 1, ok: 1 })
  socket.write(opMsg(2, insert))
  t.match((await replyTo(2)).body, { n: 1, ok: 1 }, 'the first answer again, not a duplicate key')
  socket.write(opMsg(3, {
    update: 'c', updates: [{ q: { _id: 1 }, u: { $inc: { n: 1 } } }], lsid, txnNumber: Long.fromNumber(2), $db: 'retry'
  }))
  t.match((await replyTo(3)).body, { n: 1, nModified: 1 })
  socket.write(opMsg(4, {
    update: 'c', updates: [{ q: { _id: 1 }, u: { $inc: { n: 1 } } }], lsid, txnNumber: Long.fromNumber(2), $db: 'retry'
  }))
  t.match((await replyTo(4)).body, { n: 1, nModified: 1 })
  t.strictSame(await client.db('retry').collection<{ _id: number, n?: number }>('c').findOne({ _id: 1 }),
    { _id: 1, n: 1 }, 'incremented once')
  socket.write(opMsg(5, { ...insert, documents: [{ _id: 2 }], txnNumber: Long.fromNumber(1) }))
  t.match((await replyTo(5)).body, { ok: 0, code: 225, codeName: 'TransactionTooOld' })
  socket.write(opMsg(6, { insert: 'c', documents: [{ _id: 1 }], $db: 'retry' }))
  t.match((await replyTo(6)).body, { n: 0, writeErrors: [{ code: 11000 }] }, 'without a txnNumber, a write is a write')
})
