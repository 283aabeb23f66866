// The operator table of docs/query-language.md, written out here independently of list-query/operators.ts:
// every operator on every field type either compiles or is 400 OPERATOR_NOT_ALLOWED.
import { ObjectId } from 'mongodb'
import t from 'tap'
import { Activity, Place, Registration, Session } from '../../schemas/kinds.js'
import { ID, ID2, compileFor, jsonFilter } from '../helpers/list-query.js'

const ALL = [
  '$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$regex', '$options', '$exists', '$all', '$size'
]
const TABLE: Record<string, string[]> = {
  string: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$regex', '$options', '$exists'],
  number: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'],
  date: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'],
  boolean: ['$eq', '$ne', '$in', '$nin', '$exists'],
  ref: ['$eq', '$ne', '$in', '$nin', '$exists'],
  _id: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'], // v2: ObjectIds order by creation time
  'string[]': ['$eq', '$ne', '$in', '$nin', '$all', '$size', '$regex', '$options', '$exists'],
  'ref[]': ['$eq', '$ne', '$in', '$nin', '$all', '$size', '$exists'],
  custom: ALL
}

const instant = '2024-06-14T10:00:00.000Z'
/** For each type: a field of a real kind, a valid scalar in JSON, and how it compiles. */
const FIELDS = {
  string: { schema: Activity, field: 'name', value: 'Yoga', compiled: 'Yoga' },
  number: { schema: Place, field: 'maxNumberOfParticipants', value: 50, compiled: 50 },
  date: { schema: Session, field: 'start', value: instant, compiled: new Date(instant) },
  boolean: { schema: Activity, field: 'active', value: true, compiled: true },
  ref: { schema: Activity, field: 'category', value: ID, compiled: new ObjectId(ID) },
  _id: { schema: Session, field: '_id', value: ID, compiled: new ObjectId(ID) },
  'string[]': { schema: Activity, field: 'tags', value: 'music', compiled: 'music' },
  'ref[]': { schema: Session, field: 'places', value: ID2, compiled: new ObjectId(ID2) },
  custom: { schema: Registration, field: 'customFields.ticket', value: 'day', compiled: 'day' }
} as const

function operand (op: string, value: unknown): { json: unknown, expected: Record<string, unknown> | undefined } {
  switch (op) {
    case '$in': case '$nin': case '$all': return { json: [value], expected: undefined }
    case '$regex': return { json: 'yo', expected: { $regex: 'yo' } }
    case '$options': return { json: 'i', expected: undefined }
    case '$exists': return { json: true, expected: { $exists: true } }
    case '$size': return { json: 2, expected: { $size: 2 } }
    default: return { json: value, expected: undefined }
  }
}

for (const [type, { schema, field, value, compiled }] of Object.entries(FIELDS)) {
  for (const op of ALL) {
    const allowed = TABLE[type]?.includes(op) ?? false
    t.test(`${op} on ${type} (${field}) is ${allowed ? 'allowed' : 'OPERATOR_NOT_ALLOWED'}`, async (t) => {
      const { json, expected } = operand(op, value)
      const condition = op === '$options' ? { $regex: 'yo', $options: json } : { [op]: json }
      const result = compileFor(schema, jsonFilter({ [field]: condition }))
      if (!allowed) {
        t.notOk(result.ok)
        const problem = result.ok ? undefined : result.problems.find((p) => p.pointer === `/${field}/${op}`)
        t.equal(problem?.code, 'OPERATOR_NOT_ALLOWED')
        return
      }
      t.ok(result.ok, 'compiles')
      if (!result.ok) return
      const wanted = op === '$options'
        ? { $regex: 'yo', $options: 'i' }
        : expected ?? { [op]: ['$in', '$nin', '$all'].includes(op) ? [compiled] : compiled }
      t.same(result.query.filter, { [field]: wanted })
    })
  }
}

t.test('sessionsSubscriptions.session is a reference with element semantics', async (t) => {
  const result = compileFor(Registration, jsonFilter({ 'sessionsSubscriptions.session': { $in: [ID, ID2] } }))
  t.ok(result.ok)
  if (result.ok) {
    t.same(result.query.filter, { 'sessionsSubscriptions.session': { $in: [new ObjectId(ID), new ObjectId(ID2)] } })
  }
  const regex = compileFor(Registration, jsonFilter({ 'sessionsSubscriptions.session': { $regex: 'a' } }))
  t.match(regex, { ok: false, problems: [{ code: 'OPERATOR_NOT_ALLOWED' }] })
})

t.test('an array of embedded documents takes $exists and $size only', async (t) => {
  t.match(compileFor(Registration, jsonFilter({ sessionsSubscriptions: { $size: 0 } })), { ok: true })
  t.match(compileFor(Registration, jsonFilter({ sessionsSubscriptions: { $exists: false } })), { ok: true })
  t.match(compileFor(Registration, jsonFilter({ sessionsSubscriptions: { $eq: 'x' } })),
    { ok: false, problems: [{ code: 'OPERATOR_NOT_ALLOWED' }] })
})
