// Properties that hold for every input, checked with fast-check.
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import type { Document } from 'mongodb'
import t from 'tap'
import { compileListQuery, listLimits } from '../../list-query/compile-list-query.js'
import { BLOCKED_OPERATORS } from '../../list-query/operators.js'
import { buildQuerySpec, CUSTOM_FIELD_NAME } from '../../list-query/query-spec.js'
import { ERROR_CODES } from '../../schemas/problem.js'
import { Activity, Place, Session } from '../../schemas/kinds.js'
import { build } from '../helpers/build.js'
import { LIMITS } from '../helpers/list-query.js'

const RUNS = 300
const specs = {
  activities: buildQuerySpec(Activity, { scopeField: 'project' }),
  places: buildQuerySpec(Place, { scopeField: 'project' }),
  sessions: buildQuerySpec(Session, { scopeField: 'project' })
}

const hex24 = fc.stringMatching(/^[0-9a-f]{24}$/)
// Bracket lists are split at commas and their items trimmed: texts that survive both.
const text = fc.string({ maxLength: 12 }).filter((s) => !s.includes(',') && s.trim() === s)
// A custom field's bracket value is a number or a boolean when written as one: text that is neither, or those values.
const customValue = fc.oneof(
  text.filter((s) => !/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(s) && s !== 'true' && s !== 'false'),
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.boolean()
)
const date = fc.oneof(
  fc.integer({ min: 1000, max: 9999 }).map(String),
  fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
  fc.date({ min: new Date('1000-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString())
)
const number = fc.oneof(fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
  fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }))

/** Fields and what each operator takes, for the generator of valid filters. */
const FIELDS: Record<string, { spec: keyof typeof specs, value: fc.Arbitrary<unknown>, ops: string[] }> = {
  name: {
    spec: 'activities',
    value: text,
    ops: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$regex', '$exists']
  },
  active: { spec: 'activities', value: fc.boolean(), ops: ['$eq', '$ne', '$in', '$nin', '$exists'] },
  category: { spec: 'activities', value: hex24, ops: ['$eq', '$ne', '$in', '$nin', '$exists'] },
  tags: { spec: 'activities', value: text, ops: ['$eq', '$ne', '$in', '$nin', '$all', '$size', '$regex', '$exists'] },
  createdAt: {
    spec: 'activities', value: date, ops: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']
  },
  'customFields.level': {
    spec: 'activities',
    value: customValue,
    ops: ['$eq', '$ne', '$gt', '$lt', '$in', '$nin', '$all', '$regex', '$exists']
  },
  maxNumberOfParticipants: {
    spec: 'places', value: number, ops: ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']
  },
  places: { spec: 'sessions', value: hex24, ops: ['$eq', '$ne', '$in', '$nin', '$all', '$size', '$exists'] }
}

type Condition = { literal: unknown } | { ops: Array<[string, unknown]> }

const operand = (op: string, value: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> => {
  switch (op) {
    case '$in': case '$nin': case '$all': return fc.array(value, { minLength: 1, maxLength: 5 })
    case '$exists': return fc.boolean()
    case '$size': return fc.nat({ max: 50 })
    case '$regex': return fc.stringMatching(/^[a-z]{1,8}$/)
    default: return value
  }
}

const condition = (field: string): fc.Arbitrary<Condition> => {
  const { value, ops } = FIELDS[field] as (typeof FIELDS)[string]
  return fc.oneof(
    value.map((literal) => ({ literal })),
    fc.uniqueArray(fc.constantFrom(...ops), { minLength: 1, maxLength: 3 })
      .chain((chosen) => fc.tuple(...chosen.map((op) => operand(op, value).map((v) => [op, v] as [string, unknown]))))
      .chain((entries) => entries.some(([op]) => op === '$regex')
        ? fc.subarray(['i', 'm', 's', 'x']).map((flags) =>
          ({ ops: flags.length > 0 ? [...entries, ['$options', flags.join('')] as [string, unknown]] : entries }))
        : fc.constant({ ops: entries }))
  )
}

const validFilter = fc.constantFrom(...Object.keys(specs) as Array<keyof typeof specs>).chain((spec) =>
  fc.uniqueArray(fc.constantFrom(...Object.keys(FIELDS).filter((f) => FIELDS[f]?.spec === spec)),
    { minLength: 1, maxLength: 4 })
    .chain((fields) => fc.tuple(...fields.map((f) => condition(f).map((c) => [f, c] as [string, Condition]))))
    .map((conditions) => ({ spec, conditions })))

const asJson = (conditions: Array<[string, Condition]>): string =>
  'filter=' + encodeURIComponent(JSON.stringify(Object.fromEntries(
    conditions.map(([field, c]) => [field, 'literal' in c ? c.literal : Object.fromEntries(c.ops)]))))

const asBrackets = (conditions: Array<[string, Condition]>): string => conditions.flatMap(([field, c]) => 'literal' in c
  ? [`filter[${field}]=${encodeURIComponent(String(c.literal))}`]
  : c.ops.map(([op, v]) =>
    `filter[${field}][${op}]=${encodeURIComponent(Array.isArray(v) ? v.map(String).join(',') : String(v))}`)).join('&')

const EMITTED = new Set([
  '$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$regex', '$options', '$exists', '$all', '$size', '$and',
  '$or', '$nor', '$not'
])

/** Every `$` key of a compiled filter is one the compiler may emit; every field is declared. */
function onlyAllowed (node: unknown, spec: keyof typeof specs, depth = 0): boolean {
  if (Array.isArray(node)) return node.every((item) => onlyAllowed(item, spec, depth))
  if (node === null || typeof node !== 'object' || node.constructor !== Object) return true
  return Object.entries(node as Document).every(([key, value]) => {
    if (key.startsWith('$')) {
      return EMITTED.has(key) && !BLOCKED_OPERATORS.has(key) && onlyAllowed(value, spec, depth + 1)
    }
    const declared = specs[spec].fields.has(key) ||
      (key.startsWith('customFields.') && CUSTOM_FIELD_NAME.test(key.slice(13)))
    return declared && onlyAllowed(value, spec, depth + 1)
  })
}

t.test('any valid filter compiles to the same query in both notations', async (t) => {
  fc.assert(fc.property(validFilter, ({ spec, conditions }) => {
    const json = compileListQuery(asJson(conditions), specs[spec], LIMITS)
    const brackets = compileListQuery(asBrackets(conditions), specs[spec], LIMITS)
    if (!json.ok) throw new Error(`JSON refused: ${JSON.stringify(json.problems)}`)
    t.same(brackets, json)
  }), { numRuns: RUNS })
})

t.test('compiled filters contain only allowed operators and declared fields', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(validFilter, ({ spec, conditions }) => {
    const result = compileListQuery(asJson(conditions), specs[spec], LIMITS)
    return result.ok && onlyAllowed(result.query.filter, spec)
  }), { numRuns: RUNS }), `${RUNS} valid filters`)
})

const PARAM_NAMES = ['filter', 'sort', 'limit', 'skip', 'count', 'filter[name]', 'filter[start][$gte]',
  'filter[tags][$in]', 'filter[__proto__]', 'x', 'filter[$or][0][name]', 'filter[$or][1][start][$lt]',
  'filter[$and][0][$or][0][places][$in]', 'filter[$or]', 'filter[$or][x][name]', 'filter[$or][0]',
  'filter[$nor][0][name]', 'filter[$or][0][__proto__]']
const junkQuery = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.array(fc.tuple(fc.constantFrom(...PARAM_NAMES), fc.string({ unit: 'binary', maxLength: 40 })), { maxLength: 6 })
    .map((pairs) => pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')),
  fc.jsonValue({ maxDepth: 4 }).map((v) => `filter=${encodeURIComponent(JSON.stringify(v))}`),
  fc.letrec((tie) => ({
    filter: fc.dictionary(fc.constantFrom('name', 'start', '$or', '$and', '$nor', '$where'),
      fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 1 }), fc.array(tie('filter'), { maxLength: 3 })),
      { maxKeys: 3 })
  })).filter.map((v) => `filter=${encodeURIComponent(JSON.stringify(v))}`),
  fc.dictionary(
    fc.constantFrom('name', 'start', 'tags', '$or', '$where', 'category.name', 'customFields.x', 'project', '_id'),
    fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.dictionary(
      fc.constantFrom('$eq', '$in', '$regex', '$options', '$gt', '$size', '$exists', '$near', '$foo'),
      fc.jsonValue({ maxDepth: 1 })
    ))
  ).map((v) => `filter=${encodeURIComponent(JSON.stringify(v))}`)
)

t.test('random junk never throws: a query, or problems with known codes', async (t) => {
  const codes = new Set<string>(ERROR_CODES)
  t.doesNotThrow(() => fc.assert(fc.property(
    junkQuery,
    fc.constantFrom(...Object.keys(specs) as Array<keyof typeof specs>),
    (query, spec) => {
      const result = compileListQuery(query, specs[spec], LIMITS)
      if (result.ok) return onlyAllowed(result.query.filter, spec)
      return result.problems.length >= 1 && result.problems.length <= 20 &&
        result.problems.every((p) => codes.has(p.code) && (p.pointer === '' || p.pointer.startsWith('/')) &&
          p.message.length > 0)
    }
  ), { numRuns: RUNS * 3 }), `${RUNS * 3} junk queries`)
})

t.test('random junk over HTTP is answered 200 when the compiler takes it, else 400 with its problems; ' +
  'never 5xx', async (t) => {
  const fastify = await build(t, {
    extend: (app) => app.get('/junk', { config: { listQuery: specs.sessions } },
      async (request) => ({ ok: request.listQuery !== null }))
  })
  const limits = listLimits(fastify.config)
  await t.resolves(fc.assert(fc.asyncProperty(junkQuery, async (query) => {
    const res = await fastify.inject(`/junk?${query.replaceAll('#', '%23')}`)
    // The verdict on the query string as the service received it (the URL is normalised on the way).
    const url = res.raw.req.url ?? ''
    const raw = url.includes('?') ? url.slice(url.indexOf('?') + 1) : ''
    const compiled = compileListQuery(raw, specs.sessions, limits)
    const expected = compiled.ok ? 200 : 400
    if (res.statusCode !== expected) throw new Error(`${url}: ${res.statusCode}, not ${expected}: ${res.body}`)
    if (compiled.ok) {
      if (!isDeepStrictEqual(res.json(), { ok: true })) throw new Error(`${url}: the handler answered ${res.body}`)
      return
    }
    const body = res.json() as { status: number, code: string, errors: unknown[] }
    const errors = compiled.problems.map(({ param, pointer, code, message }) => ({ param, pointer, code, message }))
    if (res.headers['content-type']?.startsWith('application/problem+json') !== true || body.status !== 400 ||
      body.code !== errors[0]?.code || !isDeepStrictEqual(body.errors, errors)) {
      throw new Error(`${url}: not the compiler's problems as problem+json: ${res.body}`)
    }
  }), { numRuns: RUNS }), `${RUNS} junk requests`)
})
