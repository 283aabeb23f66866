// Off-schema documents in every kind: a stored value whose BSON type does not fit its declared
// field is left out of that document's JSON (never invented, never a 500), and counted.
import type { TObject } from '@sinclair/typebox'
import { Decimal128, ObjectId } from 'mongodb'
import t from 'tap'
import { fieldKind, type FieldKind } from '../../schemas/fields.js'
import * as kinds from '../../schemas/kinds.js'
import { build } from '../helpers/build.js'
import { ALL_LISTS } from '../helpers/lists.js'

const MISFITS: Record<FieldKind, unknown[]> = {
  string: [12345, { a: 1 }, null, ['x'], new Date(0)],
  number: ['ten', null, true, new Decimal128('1.5'), { n: 1 }],
  boolean: ['yes', 1, null],
  date: [12345, '2024-01-01', null, { $date: 1 }],
  ref: ['not-an-id', null, 42],
  'string[]': ['not-an-array', [1, 2], null, { 0: 'a' }],
  'ref[]': ['x', ['not-an-id'], [new ObjectId(), 'x'], null],
  custom: ['text', [1, 2], null, 7],
  'object[]': ['x', [1], null, [{ session: 'not-an-id' }], [{ subscribedAt: 'yesterday' }]]
}

const COLLECTIONS: Record<string, [string, TObject]> = {
  projects: ['/projects', kinds.Project],
  activities: ['activities', kinds.Activity],
  categories: ['categories', kinds.Category],
  places: ['places', kinds.Place],
  sessions: ['sessions', kinds.Session],
  stewards: ['stewards', kinds.Steward],
  teams: ['teams', kinds.Team],
  registrations: ['registrations', kinds.Registration]
}

const fastify = await build(t)
const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
const project = new ObjectId()
await db.collection('projects').insertOne({ _id: project, name: 'Scope' })

t.test('every list is here', async (t) => {
  t.same(Object.keys(COLLECTIONS).sort(), [...ALL_LISTS].sort())
})

for (const [collection, [path, schema]] of Object.entries(COLLECTIONS)) {
  t.test(`${collection}: every misfit of every declared field is left out, the rest of the page served`, async (t) => {
    const scoped = collection !== 'projects'
    const expectations: Array<{ _id: ObjectId, field: string, misfit: unknown }> = []
    for (const [field, property] of Object.entries(schema.properties)) {
      const kind = fieldKind(property)
      if (kind === undefined || field === '_id') continue
      const misfits = field === 'project' ? [[project, new ObjectId()], String(project)] : MISFITS[kind]
      for (const misfit of misfits) {
        const doc = {
          _id: new ObjectId(),
          name: `misfit ${field}`,
          email: `${field}@example.org`,
          ...(scoped && field !== 'project' ? { project } : {}),
          [field]: misfit
        }
        expectations.push({ _id: doc._id, field, misfit })
        await db.collection(collection).insertOne(doc)
      }
    }
    const url = scoped ? `/projects/${String(project)}/${path}?limit=1000` : `${path}?limit=1000`
    const res = await fastify.inject(url)
    t.equal(res.statusCode, 200, 'the page is served')
    const byId = new Map((res.json().data as Array<Record<string, unknown>>).map((doc) => [doc._id, doc]))
    for (const { _id, field, misfit } of expectations) {
      const doc = byId.get(String(_id))
      if (doc === undefined) {
        t.ok(field === 'project' && typeof misfit === 'string',
          `${field}=${JSON.stringify(misfit)}: only a string project is out of scope`)
        continue
      }
      const value = doc[field]
      const inner = field === 'sessionsSubscriptions' && Array.isArray(value)
      t.ok(value === undefined || inner, `${field}=${JSON.stringify(misfit)} is left out`)
      if (inner) t.same(value, (misfit as object[]).map(() => ({})), 'an embedded misfit is left out of its element')
      if (field === 'name') t.equal(doc.email, 'name@example.org', 'the fields that fit are kept')
      else t.equal(doc.name, `misfit ${field}`, 'the fields that fit are kept')
    }
    const counted = [...fastify.offSchema.counts.keys()].filter((key) => key.startsWith(`${collection}.`))
    t.ok(counted.length > 0, `counted: ${counted.join(', ')}`)
  })
}
