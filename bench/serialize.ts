// Micro-benchmark: from the driver's bytes to the response body. The raw BSON documents of a
// page are (a) written straight to JSON by the kind's transcoder (list-endpoint/bson-json.ts,
// what the service does), (b) decoded as the driver decodes them, guarded and serialized by the
// route's response schema (fast-json-stringify; what the service did before), and (c) decoded
// and given to JSON.stringify (the floor's way, which keeps no field out). The transcoder also
// runs with documents kept (list-endpoint/kept-documents.ts): warm, the page's documents all
// kept from the call before; cold, a budget below the page's, so that none ever is (each is
// looked for, written, copied into the memory and pushes an older one out); new, documents
// never read before, as a walk through a collection reads them (each is looked for and written),
// against the transcoder alone on the same pages (they are not in the processor's caches).
import fastJson from 'fast-json-stringify'
import { BSON, ObjectId, type Document } from 'mongodb'
import { generateDemoData } from '../demo-data/generate.js'
import { bsonToJson, type Transcoder } from '../list-endpoint/bson-json.js'
import { decodeRaw, pageOf, type Page } from '../list-endpoint/bson-page.js'
import { KeptDocuments, SEEN } from '../list-endpoint/kept-documents.js'
import { listEnvelope } from '../list-endpoint/list-schema.js'
import { offSchemaGuard } from '../list-endpoint/off-schema.js'
import { Registration, Session } from '../schemas/kinds.js'
import type { Table } from './report.js'
import { median, timePerCall } from './timing.js'

export interface SerializeFigure {
  payload: string
  transcodeNs: number
  warmNs: number
  coldNs: number
  newNs: number
  newVsAlone: number
  schemaNs: number
  stringifyNs: number
  vsSchema: number
  vsStringify: number
}

function project (docs: Document[], fields: string[]): Document[] {
  return docs.map((doc) => Object.fromEntries(fields.filter((f) => f in doc).map((f) => [f, doc[f]])))
}

export function benchSerialize ({ rounds = 15, calls = 300 } = {}): SerializeFigure[] {
  const data = generateDemoData()
  const cases = [
    { payload: '100 registrations', schema: Registration, docs: data.registrations.slice(0, 100) },
    { payload: '20 sessions', schema: Session, docs: data.sessions.slice(0, 20) },
    { payload: '1000 registrations', schema: Registration, docs: data.registrations.slice(0, 1000) }
  ]
  return cases.map(({ payload, schema, docs }) => {
    // The same work per round whatever the page size: fewer calls for bigger pages.
    const n = Math.max(10, Math.round(calls * 20 / docs.length))
    type FjsSchema = Parameters<typeof fastJson>[0]
    const serialize = fastJson(listEnvelope(schema) as FjsSchema, {
      schema: { [schema.$id as string]: schema as FjsSchema }
    })
    const projected = project(docs, Object.keys(schema.properties))
    const raw = projected.map((doc) => Buffer.from(BSON.serialize(doc)))
    const guard = offSchemaGuard(schema)
    const transcode = bsonToJson(schema)
    const warm = bsonToJson(schema, new KeptDocuments(64 * 1024 * 1024))
    const pageBytes = raw.reduce((size, doc) => size + doc.length, 0)
    const cold = bsonToJson(schema, new KeptDocuments(Math.floor(pageBytes / 2)))
    const page = pageOf(raw)
    // Pages of the same documents under ids never used before, twice as many ids as the table of
    // ids lately seen has slots: each slot is taken by another id before its own comes round again.
    const fresh = Array.from({ length: Math.ceil(2 * SEEN / docs.length) + 1 }, () =>
      pageOf(projected.map((doc) => Buffer.from(BSON.serialize({ ...doc, _id: new ObjectId() })))))
    const unseen = bsonToJson(schema, new KeptDocuments(64 * 1024 * 1024))
    let next = 0
    let nextAlone = 0
    const misfit = (): void => { throw new Error('the demo data fits its schema') }
    const write = (transcoder: Transcoder, pageWritten: Page): Buffer =>
      transcoder(pageWritten, undefined, misfit, '{"data":', ',"limit":100,"skip":0}')
    const a: number[] = []
    const w: number[] = []
    const k: number[] = []
    const u: number[] = []
    const v: number[] = []
    const b: number[] = []
    const c: number[] = []
    for (let round = 0; round < rounds; round++) {
      a.push(timePerCall(() => write(transcode, page), n))
      w.push(timePerCall(() => write(warm, page), n))
      k.push(timePerCall(() => write(cold, page), n))
      u.push(timePerCall(() => write(unseen, fresh[next++ % fresh.length] as Page), n))
      v.push(timePerCall(() => write(transcode, fresh[nextAlone++ % fresh.length] as Page), n))
      b.push(timePerCall(() => serialize({ data: guard(raw.map(decodeRaw), misfit), limit: 100, skip: 0 }), n))
      c.push(timePerCall(() => JSON.stringify({ data: raw.map(decodeRaw), limit: 100, skip: 0 }), n))
    }
    return {
      payload,
      transcodeNs: median(a),
      warmNs: median(w),
      coldNs: median(k),
      newNs: median(u),
      newVsAlone: median(u.map((x, i) => x / (v[i] as number))),
      schemaNs: median(b),
      stringifyNs: median(c),
      vsSchema: median(a) / median(b),
      vsStringify: median(a) / median(c)
    }
  })
}

export function serializeTable (figures: SerializeFigure[]): Table {
  return {
    title: 'BSON to JSON body (median ns per page of raw documents)',
    rows: figures.map((f) => ({
      payload: f.payload,
      'transcoder ns': Math.round(f.transcodeNs),
      'documents kept: warm ns': Math.round(f.warmNs),
      'cold ns': Math.round(f.coldNs),
      'new ns': Math.round(f.newNs),
      'new / without keeping': f.newVsAlone.toFixed(2),
      'decode + guard + schema ns': Math.round(f.schemaNs),
      'decode + JSON.stringify ns': Math.round(f.stringifyNs),
      'transcoder / schema': f.vsSchema.toFixed(2),
      'transcoder / stringify': f.vsStringify.toFixed(2)
    }))
  }
}
