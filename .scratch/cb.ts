import { CursorCodec } from '../list-endpoint/cursor.ts'
import { ObjectId } from 'mongodb'
import { createHmac, createSecretKey } from 'node:crypto'
const c = new CursorCodec([Buffer.alloc(32, 1)])
const b = { path: 'registrations / 65cd7e3007370d3300000000', filter: '{"project":{"$oid":"65cd7e3007370d3300000000"}}', sort: '{"_id":1}', fields: '*' }
const v = [new ObjectId()]
for (let r = 0; r < 5; r++) {
  let t = process.hrtime.bigint()
  for (let i = 0; i < 100000; i++) c.encode(b, v)
  console.log('encode ns', Number(process.hrtime.bigint() - t) / 100000)
  const k = createSecretKey(Buffer.alloc(32, 1))
  t = process.hrtime.bigint()
  for (let i = 0; i < 100000; i++) createHmac('sha256', k).update('eyJ2IjoxLCJiIjpbIkhiMjFwNUtXM0dVTldzT1EiLCJSQk52bzFXelo0b1JScTBXIiwiNHFMVnBUR1RXZDVobGp6VSIsIlFxVGJ4eXN5TF9DX2h2U24iXSwiayI6W251bGwseyIkb2lkIjoiNjVlNmMyZjA2ZDUyYjViYzAwMDAwMDg4In1dfQ').digest()
  console.log('hmac ns', Number(process.hrtime.bigint() - t) / 100000)
}
