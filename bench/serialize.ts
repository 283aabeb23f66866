// Micro-benchmark: the list envelope serialized by the route's response schema (fast-json-stringify,
// which also keeps undeclared fields out) against JSON.stringify of the same projected documents.
import fastJson from 'fast-json-stringify'
import type { Document } from 'mongodb'
import { generateDemoData } from '../demo-data/generate.js'
import { listEnvelope } from '../list-endpoint/list-route.js'
import { offSchemaGuard } from '../list-endpoint/off-schema.js'
import { Registration, Session } from '../schemas/kinds.js'
import { median, timePerCall } from './timing.js'

export interface SerializeFigure { payload: string, schemaNs: number, stringifyNs: number, ratio: number, guardNs: number, guardShare: number }

function project (docs: Document[], fields: string[]): Document[] {
  return docs.map((doc) => Object.fromEntries(fields.filter((f) => f in doc).map((f) => [f, doc[f]])))
}

export function benchSerialize ({ rounds = 15, calls = 300 } = {}): SerializeFigure[] {
  const data = generateDemoData()
  const cases = [
    { payload: '100 registrations', schema: Registration, docs: data.registrations.slice(0, 100) },
    { payload: '20 sessions', schema: Session, docs: data.sessions.slice(0, 20) }
  ]
  return cases.map(({ payload, schema, docs }) => {
    type FjsSchema = Parameters<typeof fastJson>[0]
    const serialize = fastJson(listEnvelope(schema) as FjsSchema, { schema: { [schema.$id as string]: schema as FjsSchema } })
    const body = { data: project(docs, Object.keys(schema.properties)), limit: 100, skip: 0 }
    // The off-schema guard runs before serialization on every page (list-endpoint/off-schema.ts).
    const guard = offSchemaGuard(schema, () => { throw new Error('the demo data fits its schema') })
    const a: number[] = []
    const b: number[] = []
    const g: number[] = []
    for (let round = 0; round < rounds; round++) {
      a.push(timePerCall(() => serialize(body), calls))
      b.push(timePerCall(() => JSON.stringify(body), calls))
      g.push(timePerCall(() => guard(body.data), calls))
    }
    return { payload, schemaNs: median(a), stringifyNs: median(b), ratio: median(a) / median(b), guardNs: median(g), guardShare: median(g) / median(a) }
  })
}

export function printSerialize (figures: SerializeFigure[]): void {
  console.log('\nSerialization (median ns per envelope; ratio = response schema / JSON.stringify)')
  console.table(figures.map((f) => ({
    payload: f.payload,
    'schema ns': Math.round(f.schemaNs),
    'JSON.stringify ns': Math.round(f.stringifyNs),
    ratio: f.ratio.toFixed(2),
    'off-schema guard ns': Math.round(f.guardNs),
    'guard / schema': f.guardShare.toFixed(2)
  })))
}
