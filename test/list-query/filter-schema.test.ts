// The filter schemas published in the OpenAPI document against the compiler, both ways, so that
// neither can drift: every filter the published schema allows is accepted (except for what JSON
// Schema cannot say, NOT_EXPRESSED), and every filter the compiler accepts, the schema allows.
import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import t from 'tap'
import { compileListQuery, type CompileResult } from '../../list-query/compile-list-query.js'
import { MAX_CONDITIONS } from '../../list-query/limits.js'
import { DATE_PATTERN, NOT_EXPRESSED, type JsonSchema } from '../../list-query/filter-schema.js'
import { parseDate } from '../../list-query/dates.js'
import { OPERATORS } from '../../list-query/operators.js'
import { buildQuerySpec, type QuerySpec } from '../../list-query/query-spec.js'
import * as kinds from '../../schemas/kinds.js'
import { build } from '../helpers/build.js'
import { jsonFilter, LIMITS } from '../helpers/list-query.js'

const RUNS = Number(process.env.FILTER_SCHEMA_RUNS ?? 100)
// Eight kinds, both ways, filters with $or/$and: beyond the 90 s a file is given (package.json's tap `timeout`,
// FILE_TIMEOUT_MS in test/_groups/groups.ts) while the rest of the suite runs beside it.
t.setTimeout(120_000)

/** What the compiler may refuse although the schema allows it: the regex rules (NOT_EXPRESSED). */
const UNEXPRESSED_CODES = new Set(['INVALID_REGEX', 'UNSAFE_REGEX'])

interface Kind { name: string, spec: QuerySpec, validate: (filter: unknown) => boolean, schema: JsonSchema }

interface OpenApiDocument {
  openapi: string
  paths: Record<string, { get: { parameters: Array<{ name: string, content?: Record<string, { schema: { $ref: string } }> }> } }>
  components: { schemas: Record<string, JsonSchema> }
}

let openApi: Promise<OpenApiDocument> | undefined
/** The service's OpenAPI document, read once for the file. */
async function publishedDocument (): Promise<OpenApiDocument> {
  openApi ??= build(t).then(async (fastify) => (await fastify.inject('/docs/json')).json<OpenApiDocument>())
  return await openApi
}

let published: Promise<Kind[]> | undefined
/** The kinds' filter schemas as the OpenAPI document publishes them, compiled once for the file. */
async function publishedKinds (): Promise<Kind[]> {
  published ??= readPublishedKinds()
  return await published
}

async function readPublishedKinds (): Promise<Kind[]> {
  const document = await publishedDocument()
  const ajv = new Ajv2020({ strict: true, allErrors: false })
  return Object.values(kinds).map((kind) => {
    const name = `${kind.$id as string}Filter`
    // $or and $and refer to the component itself; compiled alone, it is the document's root.
    const schema = JSON.parse(JSON.stringify(document.components.schemas[name]).replaceAll(`"#/components/schemas/${name}"`, '"#"')) as JsonSchema
    const scopeField = 'project' in kind.properties ? 'project' : undefined
    return { name, spec: buildQuerySpec(kind, { scopeField }), validate: ajv.compile(schema), schema }
  })
}

const compile = (kind: Kind, filter: unknown): CompileResult => compileListQuery(jsonFilter(filter), kind.spec, LIMITS)

/** Field conditions in a filter, as docs/query-language.md counts them: a value one, an object of operators one per operator. */
function conditionCount (filter: unknown): number {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return 0
  let count = 0
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$or' || key === '$and') count += Array.isArray(value) ? value.reduce((sum: number, branch) => sum + conditionCount(branch), 0) : 0
    else if (!key.startsWith('$')) count += isObject(value) ? Object.entries(value).reduce((sum, [op, operand]) => sum + (op === '$elemMatch' ? elementCount(operand) : 1), 0) : 1
  }
  return count
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** Inside `$elemMatch`: an element field counts as at top level, an operator on a scalar element one. */
function elementCount (inner: unknown): number {
  if (!isObject(inner)) return 0
  let count = 0
  for (const [key, value] of Object.entries(inner)) {
    if (key === '$or' || key === '$and') count += Array.isArray(value) ? value.reduce((sum: number, branch) => sum + elementCount(branch), 0) : 0
    else count += !key.startsWith('$') && isObject(value) ? Object.keys(value).length : 1
  }
  return count
}

/**
 * A fast-check arbitrary of the JSON values a schema describes, read from the schema itself;
 * `$ref` is the schema's root (the filter in `$or`/`$and`), followed at most three levels down.
 */
const built = new WeakMap<JsonSchema, Map<number, fc.Arbitrary<unknown>>>()
function arbitraryOf (schema: JsonSchema, root: JsonSchema = schema, depth = 0): fc.Arbitrary<unknown> {
  // Built once per schema and depth: building stringMatching arbitraries is what costs.
  const byDepth = built.get(schema) ?? new Map<number, fc.Arbitrary<unknown>>()
  built.set(schema, byDepth)
  let arbitrary = byDepth.get(depth)
  if (arbitrary === undefined) byDepth.set(depth, arbitrary = buildArbitrary(schema, root, depth))
  return arbitrary
}

// By pattern, for every schema and depth: building a stringMatching arbitrary is fast-check's
// costliest step, and the kinds' schemas repeat a few patterns many times.
const matchingArbitraries = new Map<string, fc.Arbitrary<string>>()
function matching (pattern: string): fc.Arbitrary<string> {
  let arbitrary = matchingArbitraries.get(pattern)
  if (arbitrary === undefined) matchingArbitraries.set(pattern, arbitrary = fc.stringMatching(new RegExp(pattern)))
  return arbitrary
}

function buildArbitrary (schema: JsonSchema, root: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const of = (inner: JsonSchema): fc.Arbitrary<unknown> => arbitraryOf(inner, root, depth)
  if (schema.$ref === '#') return depth >= 3 ? fc.constant({}) : arbitraryOf(root, root, depth + 1)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum as unknown[])
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as JsonSchema[]).map(of))
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
      return pattern === undefined ? fc.string({ unit: 'binary', maxLength: 12 }) : matching(pattern)
    }
    case 'array': {
      const items = of(schema.items as JsonSchema)
      const max = schema.maxItems as number
      // Branches: few, so that filters stay near the size people write.
      if (schema.minItems === 1) return fc.array(items, { minLength: 1, maxLength: depth === 0 ? 3 : 2 })
      // Lists at their bound at the top only: in branches they would multiply the work, not the cases.
      if (depth > 0) return fc.array(items, { maxLength: 4 })
      return fc.oneof({ weight: 9, arbitrary: fc.array(items, { maxLength: 4 }) }, { weight: 1, arbitrary: fc.array(items, { minLength: max, maxLength: max }) })
    }
    case 'object': {
      const properties = Object.fromEntries(Object.entries(schema.properties as Record<string, JsonSchema>).map(([key, value]) => [key, of(value)]))
      const record = (keys: string[]): fc.Arbitrary<Record<string, unknown>> => fc.record(Object.fromEntries(keys.map((key) => [key, properties[key] as fc.Arbitrary<unknown>])))
      const names = Object.keys(properties).filter((key) => key !== '$or' && key !== '$and')
      const logicalNames = Object.keys(properties).filter((key) => key === '$or' || key === '$and')
      // $or/$and in one filter of four, not in a branch three levels down (the schema refuses a fourth level).
      const logical = logicalNames.length === 0 || depth >= 3
        ? fc.constant({})
        : fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.subarray(logicalNames, { minLength: 1 }).chain(record) })
      const named = fc.tuple(fc.subarray(names, { minLength: Math.min(Number(schema.minProperties ?? 0), names.length), maxLength: Math.min(depth === 0 ? 3 : 2, names.length) }).chain(record), logical).map(([a, b]) => ({ ...a, ...b }))
      const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, JsonSchema>)
      const patterned = patterns.length === 0
        ? fc.constant({})
        : fc.dictionary(fc.oneof(...patterns.map(([pattern]) => matching(pattern))), fc.oneof(...patterns.map(([, value]) => of(value))), { maxKeys: 2 })
      return fc.tuple(named, patterned).map(([a, b]) => ({ ...a, ...b }))
    }
  }
  throw new Error(`no arbitrary for ${JSON.stringify(schema).slice(0, 80)}`)
}

/** The refusals the schema cannot foresee: a $regex PCRE2 or the service's rules refuse, a text over the length limit, too many conditions. */
function unexpressed (result: CompileResult, filter: unknown): boolean {
  return !result.ok && result.problems.every((p) => (UNEXPRESSED_CODES.has(p.code) && p.pointer.endsWith('/$regex')) || p.code === 'FILTER_TOO_LARGE' ||
    (p.code === 'FILTER_TOO_COMPLEX' && p.pointer === '' && conditionCount(filter) > MAX_CONDITIONS) ||
    // Inside $elemMatch: the depth counted with the branches around it, and a scalar's alternatives.
    (p.code === 'FILTER_TOO_COMPLEX' && p.pointer.includes('/$elemMatch')))
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
      else if (unexpressed(result, filter)) refusedRegex++
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
const operatorKey = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...OPERATORS) }, { weight: 1, arbitrary: fc.constantFrom('$or', '$where', '$not', 'plain', '$regexp', '$elemMatch') })
const condition = fc.oneof(operand, fc.dictionary(operatorKey, operand, { minKeys: 0, maxKeys: 3 }))

function keysOf (spec: QuerySpec): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...spec.fields.keys()) },
    { weight: 2, arbitrary: fc.stringMatching(/^customFields\.[A-Za-z0-9_-]{1,6}$/) },
    { weight: 1, arbitrary: fc.constantFrom('project', 'customFields', 'customFields.', 'customFields.a.b', 'customFields.__proto__', 'customFields.constructor', '$and', 'category.name', 'Name', 'nmae', '', 'customFields.' + 'x'.repeat(65)) }
  )
}

/** Filters of field conditions and of $or/$and, right and wrong: branches of every count and kind, nested up to four deep. */
function filterOf (spec: QuerySpec, depth = 0, fields = fc.dictionary(keysOf(spec), condition, { maxKeys: 3 })): fc.Arbitrary<unknown> {
  if (depth >= 4) return fields
  const branch = filterOf(spec, depth + 1, fields)
  const branches = fc.oneof(
    { weight: 12, arbitrary: fc.array(branch, { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constantFrom([], {}, 'x', [1], [null], [[]], Array.from({ length: 10 }, () => ({})), Array.from({ length: 11 }, () => ({}))) }
  )
  const logical = fc.dictionary(fc.constantFrom('$or', '$and'), branches, { maxKeys: 2 })
  return fc.oneof({ weight: depth === 0 ? 1 : 3, arbitrary: fields }, { weight: 2, arbitrary: fc.tuple(fields, logical).map(([a, b]) => ({ ...a, ...b })) })
}

t.test('every filter the compiler accepts, the published schema allows; every refusal it allows is one it lists', async (t) => {
  for (const kind of await publishedKinds()) {
    let accepted = 0
    fc.assert(fc.property(filterOf(kind.spec), (filter) => {
      const result = compile(kind, filter)
      const valid = kind.validate(filter)
      if (result.ok) {
        accepted++
        if (!valid) throw new Error(`the compiler accepts ${JSON.stringify(filter)}, ${kind.name} does not`)
      } else if (valid && !unexpressed(result, filter)) {
        throw new Error(`${kind.name} allows ${JSON.stringify(filter)}, the compiler says ${JSON.stringify(result.problems)}`)
      }
    }), { numRuns: RUNS * 3 })
    t.ok(accepted > RUNS / 4, `${kind.name}: ${accepted} of ${RUNS * 3} random filters accepted`)
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

t.test('the lists, counts and feeds publish filter as JSON content typed by these schemas', async (t) => {
  const document = await publishedDocument()
  t.equal(document.openapi, '3.1.0', 'OpenAPI 3.1: its schemas are JSON Schema 2020-12 (patternProperties, dependentRequired)')
  const lists = Object.entries(document.paths).filter(([url]) => url.startsWith('/projects'))
  t.equal(lists.length, 26, 'nine lists, their nine counts and eight change feeds')
  for (const [url, item] of lists) {
    const filter = item.get.parameters.find((p) => p.name === 'filter')
    const ref = filter?.content?.['application/json']?.schema.$ref ?? ''
    t.match(ref, /^#\/components\/schemas\/[A-Z][a-z]+Filter$/, `${url}: ${ref}`)
    t.ok(document.components.schemas[ref.split('/').pop() as string], `${url}: the component exists`)
  }
})
