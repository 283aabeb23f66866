// The filter schemas published in the OpenAPI document against the compiler, both ways, so that
// neither can drift: every filter the published schema allows is accepted (except for what JSON
// Schema cannot say, NOT_EXPRESSED), and every filter the compiler accepts, the schema allows.
import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import t from 'tap'
import { compileListQuery, type CompileResult } from '../../list-query/compile-list-query.js'
import { DATE_PATTERN, NOT_EXPRESSED, type JsonSchema } from '../../list-query/filter-schema.js'
import { parseDate } from '../../list-query/dates.js'
import { OPERATORS } from '../../list-query/operators.js'
import { buildQuerySpec, type QuerySpec } from '../../list-query/query-spec.js'
import * as kinds from '../../schemas/kinds.js'
import { build } from '../helpers/build.js'
import { jsonFilter, LIMITS } from '../helpers/list-query.js'

const RUNS = Number(process.env.FILTER_SCHEMA_RUNS ?? 250)

/** What the compiler may refuse although the schema allows it: the regex rules (NOT_EXPRESSED). */
const UNEXPRESSED_CODES = new Set(['INVALID_REGEX', 'UNSAFE_REGEX'])

interface Kind { name: string, spec: QuerySpec, validate: (filter: unknown) => boolean, schema: JsonSchema }

async function publishedKinds (): Promise<Kind[]> {
  const fastify = await build(t)
  const document = (await fastify.inject('/docs/json')).json()
  const ajv = new Ajv2020({ strict: true, allErrors: false })
  return Object.values(kinds).map((kind) => {
    const name = `${kind.$id as string}Filter`
    const schema = document.components.schemas[name] as JsonSchema
    const scopeField = 'project' in kind.properties ? 'project' : undefined
    return { name, spec: buildQuerySpec(kind, { scopeField }), validate: ajv.compile(schema), schema }
  })
}

const compile = (kind: Kind, filter: unknown): CompileResult => compileListQuery(jsonFilter(filter), kind.spec, LIMITS)

/** A fast-check arbitrary of the JSON values a schema describes, read from the schema itself. */
function arbitraryOf (schema: JsonSchema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum as unknown[])
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as JsonSchema[]).map(arbitraryOf))
  switch (schema.type) {
    case 'boolean': return fc.boolean()
    case 'integer': return fc.integer({ min: schema.minimum as number, max: schema.maximum as number })
    case 'number': {
      const [min, max] = [schema.minimum as number, schema.maximum as number]
      return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.maxSafeInteger(), fc.double({ min, max, noNaN: true }), fc.constantFrom(min, max))
    }
    case 'string': {
      const pattern = schema.pattern as string | undefined
      const maxLength = schema.maxLength as number | undefined
      if (maxLength !== undefined) {
        const matches = (s: string): boolean => pattern === undefined || new RegExp(pattern, 'u').test(s)
        return fc.oneof(
          fc.string({ unit: 'binary', maxLength: 12 }).filter(matches),
          fc.stringMatching(/^[a-z]{1,8}$/),
          // At the bound, in code points (astral characters count one).
          fc.string({ unit: fc.constantFrom('a', 'é', '😀'), minLength: maxLength, maxLength })
        )
      }
      return pattern === undefined ? fc.string({ unit: 'binary', maxLength: 12 }) : fc.stringMatching(new RegExp(pattern))
    }
    case 'array': {
      const items = arbitraryOf(schema.items as JsonSchema)
      const max = schema.maxItems as number
      return fc.oneof({ weight: 9, arbitrary: fc.array(items, { maxLength: 4 }) }, { weight: 1, arbitrary: fc.array(items, { minLength: max, maxLength: max }) })
    }
    case 'object': {
      const properties = Object.fromEntries(Object.entries(schema.properties as Record<string, JsonSchema>).map(([key, value]) => [key, arbitraryOf(value)]))
      const names = Object.keys(properties)
      const named = fc.subarray(names, { maxLength: Math.min(3, names.length) }).chain((keys) => fc.record(Object.fromEntries(keys.map((key) => [key, properties[key] as fc.Arbitrary<unknown>]))))
      const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, JsonSchema>)
      const patterned = patterns.length === 0
        ? fc.constant({})
        : fc.dictionary(fc.oneof(...patterns.map(([pattern]) => fc.stringMatching(new RegExp(pattern)))), fc.oneof(...patterns.map(([, value]) => arbitraryOf(value))), { maxKeys: 2 })
      return fc.tuple(named, patterned).map(([a, b]) => ({ ...a, ...b }))
    }
  }
  throw new Error(`no arbitrary for ${JSON.stringify(schema).slice(0, 80)}`)
}

/** The refusals the schema cannot foresee: a $regex PCRE2 or the service's rules refuse, or a text over the length limit. */
function unexpressed (result: CompileResult): boolean {
  return !result.ok && result.problems.every((p) => (UNEXPRESSED_CODES.has(p.code) && p.pointer.endsWith('/$regex')) || p.code === 'FILTER_TOO_LARGE')
}

t.test('the schema lists what it cannot say', async (t) => {
  t.ok(NOT_EXPRESSED.length >= 4)
  const [kind] = await publishedKinds()
  t.match(kind?.schema.description, /lone surrogate/)
})

t.test('every filter the published schema allows, the compiler accepts (but for the regex rules it lists)', async (t) => {
  for (const kind of await publishedKinds()) {
    let accepted = 0
    let refusedRegex = 0
    fc.assert(fc.property(arbitraryOf(kind.schema).filter(kind.validate), (filter) => {
      const result = compile(kind, filter)
      if (result.ok) accepted++
      else if (unexpressed(result)) refusedRegex++
      else throw new Error(`${kind.name} allows ${JSON.stringify(filter).slice(0, 300)}, the compiler says ${JSON.stringify(result.problems)}`)
    }), { numRuns: RUNS })
    t.ok(accepted > RUNS / 2, `${kind.name}: ${accepted} of ${RUNS} accepted, ${refusedRegex} refused for their $regex`)
  }
})

// Filters of every shape, right and wrong: the fields and neighbours of their names, every
// operator and some that are not, and values of every type, some of them just out of bounds.
const hex24 = fc.stringMatching(/^[0-9a-fA-F]{24}$/)
const dateLike = fc.oneof(
  fc.stringMatching(/^[0-9]{4}$/),
  fc.stringMatching(/^[0-9]{4}-[0-3][0-9]-[0-3][0-9]$/),
  fc.stringMatching(/^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\.[0-9]{3})?(Z|[+-][0-2][0-9]:[0-6][0-9])$/)
)
const scalar = fc.oneof(
  fc.string({ maxLength: 6 }), hex24, dateLike, fc.boolean(), fc.constant(null),
  fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(2 ** 53, -(2 ** 53), 2 ** 53 + 2, 1.5, 2 ** 31 - 1, 2 ** 31),
  fc.constantFrom('i', 'im', 'ii', 'xsmi', 'g', ''), fc.stringMatching(/^[a-z]{0,4}$/)
)
const operand = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 3, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.array(hex24, { minLength: 100, maxLength: 101 }) },
  { weight: 1, arbitrary: fc.constantFrom({}, { a: 1 }, [[1]]) }
)
const operatorKey = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...OPERATORS) }, { weight: 1, arbitrary: fc.constantFrom('$or', '$where', '$not', 'plain', '$regexp') })
const condition = fc.oneof(operand, fc.dictionary(operatorKey, operand, { minKeys: 0, maxKeys: 3 }))

function keysOf (spec: QuerySpec): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...spec.fields.keys()) },
    { weight: 2, arbitrary: fc.stringMatching(/^customFields\.[A-Za-z0-9_-]{1,6}$/) },
    { weight: 1, arbitrary: fc.constantFrom('project', 'customFields', 'customFields.', 'customFields.a.b', 'customFields.__proto__', 'customFields.constructor', '$and', 'category.name', 'Name', 'nmae', '', 'customFields.' + 'x'.repeat(65)) }
  )
}

t.test('every filter the compiler accepts, the published schema allows; every refusal it allows is one it lists', async (t) => {
  for (const kind of await publishedKinds()) {
    let accepted = 0
    fc.assert(fc.property(fc.dictionary(keysOf(kind.spec), condition, { maxKeys: 3 }), (filter) => {
      const result = compile(kind, filter)
      const valid = kind.validate(filter)
      if (result.ok) {
        accepted++
        if (!valid) throw new Error(`the compiler accepts ${JSON.stringify(filter)}, ${kind.name} does not`)
      } else if (valid && !unexpressed(result)) {
        throw new Error(`${kind.name} allows ${JSON.stringify(filter)}, the compiler says ${JSON.stringify(result.problems)}`)
      }
    }), { numRuns: RUNS * 4 })
    t.ok(accepted > RUNS / 4, `${kind.name}: ${accepted} of ${RUNS * 4} random filters accepted`)
  }
})

t.test('the date pattern is the parser: calendar-exact, leap years included', async (t) => {
  const pattern = new RegExp(DATE_PATTERN, 'u')
  fc.assert(fc.property(dateLike, (text) => pattern.test(text) === (parseDate(text) !== undefined)), { numRuns: 5000 })
  for (const [text, valid] of [['2024-02-29', true], ['2023-02-29', false], ['2000-02-29', true], ['1900-02-29', false], ['0000-02-29', true], ['2024-04-31', false], ['2024-12-31T23:59:59.999+14:00', true], ['2024-12-31T24:00:00Z', false]] as const) {
    t.equal(pattern.test(text), valid, text)
    t.equal(parseDate(text) !== undefined, valid, `${text}: the parser agrees`)
  }
})

t.test('the list routes publish filter as JSON content typed by these schemas', async (t) => {
  const fastify = await build(t)
  const document = (await fastify.inject('/docs/json')).json()
  t.equal(document.openapi, '3.1.0', 'OpenAPI 3.1: its schemas are JSON Schema 2020-12 (patternProperties, dependentRequired)')
  const lists = Object.entries(document.paths as Record<string, { get: { parameters: Array<{ name: string, content?: Record<string, { schema: { $ref: string } }> }> } }>).filter(([url]) => url.startsWith('/projects'))
  t.equal(lists.length, 17, 'nine lists and eight change feeds')
  for (const [url, item] of lists) {
    const filter = item.get.parameters.find((p) => p.name === 'filter')
    const ref = filter?.content?.['application/json']?.schema.$ref ?? ''
    t.match(ref, /^#\/components\/schemas\/[A-Z][a-z]+Filter$/, `${url}: ${ref}`)
    t.ok(document.components.schemas[ref.split('/').pop() as string], `${url}: the component exists`)
  }
})
