// A reply damaged between the database and the service (a faulty middlebox, a flipped bit on a
// link without checksums): the list answers 503 with Retry-After within the bound, never a 500
// or a page built from the damage, and the service serves again.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { ANSWER_BOUND_MS, RECOVERY_BOUND_MS, faultApp, proxiedDatabase, recoveryTime } from './fault-app.js'
import { REPLY_DOCUMENT_AT } from './fault-proxy.js'

t.setTimeout(120_000)
const proxy = await proxiedDatabase(t)
const logLines: Array<Record<string, unknown>> = []
const fastify = await faultApp(t, proxy, { logLines })
const project = new ObjectId()
await fastify.database.db().collection('projects').insertOne({ _id: project, name: 'Garbled' })
const url = `/projects?filter=${encodeURIComponent(JSON.stringify({ _id: String(project) }))}`
const isFind = (command: Record<string, unknown>): boolean => command.find === 'projects'

/** Where the first document of the reply's first batch starts. */
function firstDocument (frame: Buffer): number {
  const at = frame.indexOf('firstBatch\0')
  if (at < 0) throw new Error('not a cursor reply')
  // The array's length, then its element "0": a type byte, the name with its NUL, the document.
  return at + 'firstBatch\0'.length + 4 + 1 + 2
}

interface Damage {
  damage: (frame: Buffer) => void
  /** The problem answered. */
  code: 'DATABASE_UNAVAILABLE' | 'QUERY_TIMEOUT'
  /**
   * The driver's connection is left out of step with the messages (it keeps a connection whose
   * message was shorter than its header): the next command on it waits for the request's
   * deadline, whose abort closes it, so serving resumes after one more 503.
   */
  outOfStep?: true
}
const damages: Record<string, Damage> = {
  'an element of an unknown type in a document': {
    damage: (frame) => { frame[firstDocument(frame) + 4] = 0x20 },
    code: 'DATABASE_UNAVAILABLE'
  },
  'a document longer than its batch': {
    damage: (frame) => { frame.writeInt32LE(1 << 20, firstDocument(frame)) },
    code: 'DATABASE_UNAVAILABLE'
  },
  'a document whose last byte is not its NUL': {
    damage: (frame) => {
      const at = firstDocument(frame)
      frame[at + frame.readInt32LE(at) - 1] = 1
    },
    code: 'DATABASE_UNAVAILABLE'
  },
  'a reply whose own length lies': {
    damage: (frame) => { frame.writeInt32LE(1 << 20, REPLY_DOCUMENT_AT) },
    code: 'DATABASE_UNAVAILABLE'
  },
  'a reply with an element of an unknown type': {
    damage: (frame) => { frame[REPLY_DOCUMENT_AT + 4] = 0x20 },
    code: 'DATABASE_UNAVAILABLE'
  },
  // One flipped bit in a name: the reply holds no `cursor`.
  'a reply whose cursor lost its name': {
    damage: (frame) => { frame[frame.indexOf('\x03cursor\0') + 1] ^= 0x20 },
    code: 'DATABASE_UNAVAILABLE'
  },
  'an unknown opcode': { damage: (frame) => { frame.writeInt32LE(1234, 12) }, code: 'DATABASE_UNAVAILABLE' },
  'OP_COMPRESSED whose body does not match its header': {
    damage: (frame) => { frame.writeInt32LE(2012, 12) },
    code: 'DATABASE_UNAVAILABLE'
  },
  'a negative message length': { damage: (frame) => { frame.writeInt32LE(-5, 0) }, code: 'DATABASE_UNAVAILABLE' },
  'a message length shorter than its header': {
    damage: (frame) => { frame.writeInt32LE(10, 0) },
    code: 'DATABASE_UNAVAILABLE',
    outOfStep: true
  },
  // The driver waits for the rest of a message that never comes: the request's deadline ends it.
  'a message length past what arrives': {
    damage: (frame) => { frame.writeInt32LE(frame.length + 1000, 0) },
    code: 'QUERY_TIMEOUT'
  }
}

t.equal((await fastify.inject(url)).statusCode, 200, 'the page is served undamaged')
for (const [name, { damage, code, outOfStep }] of Object.entries(damages)) {
  t.test(name, async (t) => {
    let damaged = 0
    proxy.rewriteReply(isFind, (frame) => {
      damaged++
      damage(frame)
    })
    logLines.length = 0
    const started = Date.now()
    const res = await fastify.inject(url)
    const ms = Date.now() - started
    t.equal(damaged, 1, 'the reply to the page\'s find was damaged')
    t.equal(res.statusCode, 503)
    t.match(res.json(), code === 'DATABASE_UNAVAILABLE' ? { code, detail: /damaged/ } : { code })
    t.equal(res.headers['retry-after'], '1')
    t.ok(ms <= ANSWER_BOUND_MS, `answered in ${ms} ms`)
    t.notMatch(res.body, /BSON|offset|bytes|buffer|length/i, 'nothing of the decoder\'s message in the answer')
    const fault = logLines.find((line) => line.msg === 'database fault' && line.code === code)
    t.ok(fault, 'logged as a database fault')
    if (code === 'DATABASE_UNAVAILABLE') {
      t.match(fault?.err, /^(MalformedBson|BSON\w*Error|MongoParseError|MongoDecompressionError|RangeError)$/,
        `the log names the error: ${String(fault?.err)}`)
    }
    t.notOk(logLines.some((line) => line.msg === 'request failed'), 'not logged as a failure of the service')
    proxy.heal()
    if (outOfStep === true) {
      t.ok(await recoveryTime(fastify, url) <= RECOVERY_BOUND_MS, 'serving again')
    } else {
      const again = await fastify.inject(url)
      t.equal(again.statusCode, 200, 'the next request is served')
    }
    const page = await fastify.inject(url)
    t.equal((page.json() as { data: Array<{ name: string }> }).data[0]?.name, 'Garbled', 'the page as stored')
  })
}

// Counts read through the driver's cursor, which refuses a reply without its cursor or batch.
const counts = `/projects/counts?by=name&filter=${encodeURIComponent(JSON.stringify({ _id: String(project) }))}`
for (const name of ['cursor', 'firstBatch']) {
  t.test(`counts: a reply whose ${name} lost its name is a 503, as for a list`, async (t) => {
    let damaged = 0
    proxy.rewriteReply((command) => command.aggregate === 'projects', (frame) => {
      frame[frame.indexOf(`${name}\0`)] ^= 0x20
      damaged++
    })
    logLines.length = 0
    const started = Date.now()
    const res = await fastify.inject(counts)
    const ms = Date.now() - started
    proxy.heal()
    t.equal(damaged, 1, 'the reply to the counts\' aggregate was damaged')
    t.match({ status: res.statusCode, ...res.json() as object },
      { status: 503, code: 'DATABASE_UNAVAILABLE', detail: /damaged/ })
    t.ok(ms <= ANSWER_BOUND_MS, `answered in ${ms} ms`)
    t.match(logLines.find((line) => line.msg === 'database fault'), { err: 'MongoUnexpectedServerResponseError' },
      'logged as a database fault')
    t.same((await fastify.inject(counts)).json(), { groups: [{ value: 'Garbled', count: 1 }], total: 1, more: false },
      'then counted as stored')
  })
}
