// Documents kept with their JSON: a page written with them is byte for byte the page written
// without them, whatever changed in the documents between two pages; only unchanged documents
// are copied, and the memory stays within its budget.
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { BSON, ObjectId, type Document } from 'mongodb'
import t from 'tap'
import { bsonToJson } from '../../list-endpoint/bson-json.js'
import { pageOf } from '../../list-endpoint/bson-page.js'
import { Out } from '../../list-endpoint/json-out.js'
import { KeptDocuments, SEEN } from '../../list-endpoint/kept-documents.js'
import type { Misfit } from '../../list-endpoint/off-schema.js'
import { Registration, Session } from '../../schemas/kinds.js'

const raw = (docs: Document[]): Buffer[] => docs.map((doc) => Buffer.from(BSON.serialize(doc)))

function writer (kept?: KeptDocuments, schema = Registration) {
  const transcode = bsonToJson(schema, kept)
  return (docs: Buffer[], omit?: ReadonlySet<string>): { json: string, misfits: Misfit[] } => {
    const misfits: Misfit[] = []
    const json = transcode(pageOf(docs), omit, (misfit) => misfits.push(misfit), '{"data":', '}').toString('utf8')
    return { json, misfits }
  }
}

const registration = (id: ObjectId, name: string, extra: Document = {}): Document => ({
  _id: id,
  project: new ObjectId('65cd7e3007370d3300000000'),
  name,
  email: `${name}@example.org`,
  createdAt: new Date('2024-06-14T09:30:00.123Z'),
  ...extra
})

t.test('an unchanged document is kept when written twice, then copied; ' +
  'its page is the page written without keeping', async (t) => {
  const kept = new KeptDocuments(1024 * 1024)
  const withKept = writer(kept)
  const without = writer()
  const docs = raw([registration(new ObjectId(), 'ann'), registration(new ObjectId(), 'bob')])
  const first = withKept(docs)
  t.same(first, without(docs), 'first page: written')
  t.equal(kept.reused, 0)
  t.equal(kept.written, 2)
  t.equal(kept.size, 0, 'a document written once is not kept')
  t.same(withKept(docs), without(docs), 'second page: written, and kept')
  t.equal(kept.reused, 0)
  t.same(withKept(docs), without(docs), 'third page: the same bytes')
  t.equal(kept.reused, 2, 'both documents copied')
})

t.test('a document changed under the same _id is written again, even at the same length', async (t) => {
  const kept = new KeptDocuments(1024 * 1024)
  const withKept = writer(kept)
  const id = new ObjectId()
  withKept(raw([registration(id, 'ann')]))
  const renamed = raw([registration(id, 'amy')])
  t.equal(renamed[0]?.length, raw([registration(id, 'ann')])[0]?.length, 'same length, other bytes')
  t.same(withKept(renamed), writer()(renamed), 'the new name is sent')
  t.equal(kept.reused, 0, 'nothing copied')
  t.match(withKept(renamed).json, /"amy"/, 'and it is kept from then on')
  t.equal(kept.reused, 1)
})

t.test('a document with a value left out is reported on every page, never kept', async (t) => {
  const kept = new KeptDocuments(1024 * 1024)
  const withKept = writer(kept)
  const docs = raw([registration(new ObjectId(), 'ann', { createdAt: 'not a date' })])
  t.equal(withKept(docs).misfits.length, 1)
  t.equal(withKept(docs).misfits.length, 1, 'reported again')
  t.equal(kept.reused, 0)
})

t.test('a page that leaves fields out writes its own; other kinds keep their own', async (t) => {
  const kept = new KeptDocuments(1024 * 1024)
  const id = new ObjectId()
  const docs = raw([registration(id, 'ann')])
  const registrations = writer(kept)
  // Written twice: kept.
  registrations(docs)
  registrations(docs)
  const omitted = registrations(docs, new Set(['createdAt']))
  t.notMatch(omitted.json, /createdAt/, 'the omitted field is not copied in')
  t.equal(kept.reused, 0)
  // A kind's list and its feed (two transcoders of one schema) share what they keep.
  t.same(writer(kept)(docs), writer()(docs))
  t.equal(kept.reused, 1, 'another transcoder of the kind copies it')
  const session = raw([{ _id: id, project: new ObjectId(), title: 's', start: new Date(0), end: new Date(1) }])
  t.same(writer(kept, Session)(session), writer(undefined, Session)(session),
    'a session with the same _id is its own document')
  t.equal(kept.reused, 1)
})

t.test('documents whose first element is not an ObjectId _id are written every time', async (t) => {
  const kept = new KeptDocuments(1024 * 1024)
  const withKept = writer(kept)
  const docs = raw([{ name: 'first', _id: new ObjectId() }, { _id: 'text-id', name: 'x' }])
  t.same(withKept(docs), writer()(docs))
  t.same(withKept(docs), writer()(docs))
  t.equal(kept.reused + kept.written, 0, 'never looked for')
})

t.test('a walk through more documents than ids are remembered keeps none, ' +
  'though they were made in the same second', async (t) => {
  const kept = new KeptDocuments(64 * 1024 * 1024)
  const withKept = writer(kept)
  // As a bulk insert makes them: one second, one process, counters that follow each other.
  const ids = Array.from({ length: 2 * SEEN + 100 }, (_, i) =>
    ObjectId.createFromHexString(`65cd7e30${'0a1b2c3d4e'}${i.toString(16).padStart(6, '0')}`))
  const pages = Array.from({ length: ids.length / 100 }, (_, p) =>
    raw(ids.slice(p * 100, p * 100 + 100).map((id) => registration(id, 'someone'))))
  for (let walk = 0; walk < 2; walk++) for (const page of pages) withKept(page)
  t.equal(kept.count, 0, 'no document kept: each was written once in its walk')
  t.equal(kept.reused, 0)
  // Read twice in a row, a document of the walk is kept, and copied the third time.
  const again = pages[3] as Buffer[]
  for (let i = 0; i < 3; i++) withKept(again)
  t.equal(kept.reused, 100, 'a page read three times in a row is copied the third time')
})

t.test('two ids whose keys meet: each page is still its own, and each document is kept in turn', async (t) => {
  const kept = new KeptDocuments(1024 * 1024)
  const tag = kept.tagOf(Registration)
  // Ids of one second and one process differ in their counters and never meet: ids of any
  // bytes (digests of 0, 1, 2…) until two do, after about 2^15 of them.
  const seen = new Map<number, ObjectId>()
  let pair: [ObjectId, ObjectId] | undefined
  for (let i = 0; pair === undefined && i < 1 << 20; i++) {
    const id = ObjectId.createFromHexString(createHash('sha256').update(String(i)).digest('hex').slice(0, 24))
    const key = kept.keyOf(tag, Buffer.from(BSON.serialize({ _id: id })), 0) as number
    const other = seen.get(key)
    if (other !== undefined) pair = [other, id]
    seen.set(key, id)
  }
  t.ok(pair !== undefined, 'a pair found')
  const [a, b] = pair as [ObjectId, ObjectId]
  const withKept = writer(kept)
  // The same name and length: only the ids tell the two documents apart.
  const pages = [raw([registration(a, 'same')]), raw([registration(b, 'same')])]
  for (const page of [0, 0, 0, 1, 1, 0, 1, 1, 0]) {
    t.same(withKept(pages[page] as Buffer[]), writer()(pages[page] as Buffer[]))
  }
  t.ok(kept.reused > 0, `${kept.reused} copied`)
})

t.test('a copy needs the key, the kind and the bytes: ' +
  'the same key and bytes under another kind are not copied', async (t) => {
  const kept = new KeptDocuments(1024 * 1024)
  const [session, registration] = [kept.tagOf(Session), kept.tagOf(Registration)]
  t.not(session, registration)
  const doc = Buffer.from(BSON.serialize({ _id: new ObjectId(), name: 'x' }))
  const json = Buffer.from('{"_id":"…","name":"x"}')
  // Kept on its second write, under a key of the caller's choosing.
  for (let i = 0; i < 2; i++) kept.keep(session, 7, doc, 0, json, 0, json.length)
  const out = new Out(64)
  t.notOk(kept.reuse(out, registration, 7, doc, 0), 'another kind: written')
  t.notOk(kept.reuse(out, session, 8, doc, 0), 'another key: written')
  t.equal(out.pos, 0, 'nothing copied')
  t.ok(kept.reuse(out, session, 7, doc, 0), 'its kind, key and bytes: copied')
  t.equal(out.buf.toString('utf8', 0, out.pos), json.toString('utf8'))
})

t.test('the memory stays within its budget: the oldest are written over first', async (t) => {
  const budget = 64 * 1024
  const kept = new KeptDocuments(budget)
  t.equal(kept.size, 0, 'nothing held before a document is kept')
  const withKept = writer(kept)
  const ids = Array.from({ length: 400 }, () => new ObjectId())
  // Each written twice: the second time keeps it.
  for (const id of ids) for (let i = 0; i < 2; i++) withKept(raw([registration(id, 'someone with a name')]))
  t.equal(kept.size, budget, 'one block of the budget')
  t.ok(kept.count > 100 && kept.count < 400, `${kept.count} documents kept`)
  withKept(raw([registration(ids[0] as ObjectId, 'someone with a name')]))
  t.equal(kept.reused, 0, 'the first document was written over')
  withKept(raw([registration(ids.at(-1) as ObjectId, 'someone with a name')]))
  t.equal(kept.reused, 1, 'the last one is still kept')
  // Round after round: every document kept is still found, each once.
  for (let round = 0; round < 3; round++) for (const id of ids) withKept(raw([registration(id, 'someone with a name')]))
  t.ok(kept.count < 400, 'the forgotten are forgotten')
})

// Pages drawn from a few documents, each of which may change between pages: the page written
// with kept documents is always the one written without.
t.test('any sequence of pages and changes: the same bytes as without keeping', async (t) => {
  const ids = Array.from({ length: 4 }, () => new ObjectId())
  // Few versions, so that the same bytes come back often: a changed name, a name of the same
  // length, a date that is no date (a misfit).
  const version = fc.constantFrom({ name: 'ann', createdAt: new Date(0) }, { name: 'amy', createdAt: new Date(0) },
    { name: 'annabel', createdAt: new Date(1) }, { name: 'ann', createdAt: 'x' })
  const page = fc.array(fc.tuple(fc.nat(3), version), { minLength: 1, maxLength: 4 })
  let runs = 0
  let reused = 0
  t.doesNotThrow(() => fc.assert(fc.property(fc.array(page, { minLength: 1, maxLength: 6 }), (pages) => {
    runs++
    // A budget of a few entries: the block is written round again and again.
    const kept = new KeptDocuments(1024)
    const withKept = writer(kept)
    const without = writer()
    for (const entries of pages) {
      const docs = raw(entries.map(([i, v]) => registration(ids[i] as ObjectId, v.name, { createdAt: v.createdAt })))
      const a = withKept(docs)
      const b = without(docs)
      if (a.json !== b.json || a.misfits.length !== b.misfits.length) throw new Error(`${a.json}\n${b.json}`)
    }
    reused += kept.reused
  }), { numRuns: 300, seed: 7 }))
  t.equal(runs, 300)
  t.ok(reused > 100, `${reused} documents copied across the runs`)
})
