// The filter schemas published in the OpenAPI document against the compiler, both ways, so that
// neither can drift: every filter the published schema allows is accepted (except for what JSON
// Schema cannot say, NOT_EXPRESSED), and every filter the compiler accepts, the schema allows.
// The filters drawn are filter-schema-cases.ts's.
import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import t from 'tap'
import { compileListQuery, type CompileResult } from '../../list-query/compile-list-query.js'
import { MAX_CONDITIONS } from '../../list-query/limits.js'
import { DATE_PATTERN, NOT_EXPRESSED, type JsonSchema } from '../../list-query/filter-schema.js'
import { parseDate } from '../../list-query/dates.js'
import { buildQuerySpec, type QuerySpec } from '../../list-query/query-spec.js'
import * as kinds from '../../schemas/kinds.js'
import { build } from '../helpers/build.js'
import { jsonFilter, LIMITS } from '../helpers/list-query.js'
import { ALL_LISTS, listRoutes } from '../helpers/lists.js'
import { arbitraryOf, dateLike, filterOf } from './filter-schema-cases.js'

const RUNS = Number(process.env.FILTER_SCHEMA_RUNS ?? 100)
// Eight kinds, both ways, filters with $or/$and: beyond the 90 s a file is given (package.json's tap
// `timeout`, FILE_TIMEOUT_MS in test/_groups/groups.ts) while the rest of the suite runs beside it.
t.setTimeout(120_000)

/** What the compiler may refuse although the schema allows it: the regex rules (NOT_EXPRESSED). */
const UNEXPRESSED_CODES = new Set(['INVALID_REGEX', 'UNSAFE_REGEX'])

interface Kind { name: string, spec: QuerySpec, validate: (filter: unknown) => boolean, schema: JsonSchema }

interface Parameter { name: string, content?: Record<string, { schema: { $ref: string } }> }
interface OpenApiDocument {
  openapi: string
  paths: Record<string, { get: { parameters: Parameter[] } }>
  components: { schemas: Record<string, JsonSchema> }
}

let openApi: Promise<OpenApiDocument> | undefined
/** The lists the app registers, heard as publishedDocument builds it. */
const heard = listRoutes()
/** The service's OpenAPI document, read once for the file. */
async function publishedDocument (): Promise<OpenApiDocument> {
  openApi ??= build(t, { onRoute: heard.onRoute })
    .then(async (fastify) => (await fastify.inject('/docs/json')).json<OpenApiDocument>())
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
    const schema = JSON.parse(
      JSON.stringify(document.components.schemas[name]).replaceAll(`"#/components/schemas/${name}"`, '"#"')
    ) as JsonSchema
    const scopeField = 'project' in kind.properties ? 'project' : undefined
    return { name, spec: buildQuerySpec(kind, { scopeField }), validate: ajv.compile(schema), schema }
  })
}

const compile = (kind: Kind, filter: unknown): CompileResult =>
  compileListQuery(jsonFilter(filter), kind.spec, LIMITS)

/**
 * Field conditions in a filter, as docs/query-language.md counts them: a value one, an object of
 * operators one per operator.
 */
function conditionCount (filter: unknown): number {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return 0
  let count = 0
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$or' || key === '$and') {
      count += Array.isArray(value) ? value.reduce((sum: number, branch) => sum + conditionCount(branch), 0) : 0
    } else if (!key.startsWith('$')) {
      count += isObject(value)
        ? Object.entries(value)
          .reduce((sum, [op, operand]) => sum + (op === '$elemMatch' ? elementCount(operand) : 1), 0)
        : 1
    }
  }
  return count
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/** Inside `$elemMatch`: an element field counts as at top level, an operator on a scalar element one. */
function elementCount (inner: unknown): number {
  if (!isObject(inner)) return 0
  let count = 0
  for (const [key, value] of Object.entries(inner)) {
    if (key === '$or' || key === '$and') {
      count += Array.isArray(value) ? value.reduce((sum: number, branch) => sum + elementCount(branch), 0) : 0
    } else {
      count += !key.startsWith('$') && isObject(value) ? Object.keys(value).length : 1
    }
  }
  return count
}

/**
 * The refusals the schema cannot foresee: a $regex PCRE2 or the service's rules refuse, a text over
 * the length limit, too many conditions.
 */
function unexpressed (result: CompileResult, filter: unknown): boolean {
  return !result.ok && result.problems.every((p) =>
    (UNEXPRESSED_CODES.has(p.code) && p.pointer.endsWith('/$regex')) || p.code === 'FILTER_TOO_LARGE' ||
    (p.code === 'FILTER_TOO_COMPLEX' && p.pointer === '' && conditionCount(filter) > MAX_CONDITIONS) ||
    // Inside $elemMatch: the depth counted with the branches around it, and a scalar's alternatives.
    (p.code === 'FILTER_TOO_COMPLEX' && p.pointer.includes('/$elemMatch')))
}

t.test('the schema lists what it cannot say', async (t) => {
  t.ok(NOT_EXPRESSED.length >= 4)
  const [kind] = await publishedKinds()
  t.match(kind?.schema.description, /lone surrogate/)
})

t.test('every filter the published schema allows, the compiler accepts ' +
  '(but for the regex rules it lists)', async (t) => {
  for (const kind of await publishedKinds()) {
    let accepted = 0
    let refusedRegex = 0
    fc.assert(fc.property(arbitraryOf(kind.schema).filter(kind.validate), (filter) => {
      const result = compile(kind, filter)
      if (result.ok) accepted++
      else if (unexpressed(result, filter)) refusedRegex++
      else {
        throw new Error(`${kind.name} allows ${JSON.stringify(filter).slice(0, 300)}, ` +
          `the compiler says ${JSON.stringify(result.problems)}`)
      }
    }), { numRuns: RUNS })
    t.ok(accepted > RUNS / 2, `${kind.name}: ${accepted} of ${RUNS} accepted, ${refusedRegex} refused for their $regex`)
  }
})

t.test('every filter the compiler accepts, the published schema allows; ' +
  'every refusal it allows is one it lists', async (t) => {
  for (const kind of await publishedKinds()) {
    let accepted = 0
    fc.assert(fc.property(filterOf(kind.spec), (filter) => {
      const result = compile(kind, filter)
      const valid = kind.validate(filter)
      if (result.ok) {
        accepted++
        if (!valid) throw new Error(`the compiler accepts ${JSON.stringify(filter)}, ${kind.name} does not`)
      } else if (valid && !unexpressed(result, filter)) {
        throw new Error(
          `${kind.name} allows ${JSON.stringify(filter)}, the compiler says ${JSON.stringify(result.problems)}`
        )
      }
    }), { numRuns: RUNS * 3 })
    t.ok(accepted > RUNS / 4, `${kind.name}: ${accepted} of ${RUNS * 3} random filters accepted`)
  }
})

t.test('the date pattern is the parser: calendar-exact, leap years included', async (t) => {
  const pattern = new RegExp(DATE_PATTERN, 'u')
  fc.assert(fc.property(dateLike, (text) => pattern.test(text) === (parseDate(text) !== undefined)),
    { numRuns: 5000 })
  const dates = [
    ['2024-02-29', true], ['2023-02-29', false], ['2000-02-29', true], ['1900-02-29', false], ['0000-02-29', true],
    ['2024-04-31', false], ['2024-12-31T23:59:59.999+14:00', true], ['2024-12-31T24:00:00Z', false]
  ] as const
  for (const [text, valid] of dates) {
    t.equal(pattern.test(text), valid, text)
    t.equal(parseDate(text) !== undefined, valid, `${text}: the parser agrees`)
  }
})

t.test('the lists, counts and feeds publish filter as JSON content typed by these schemas', async (t) => {
  const document = await publishedDocument()
  t.equal(document.openapi, '3.1.0',
    'OpenAPI 3.1: its schemas are JSON Schema 2020-12 (patternProperties, dependentRequired)')
  const lists = Object.entries(document.paths).filter(([url]) => url.startsWith('/projects'))
  const registered = heard.routes.length
  t.ok(registered >= ALL_LISTS.length, `${registered} lists registered`)
  t.equal(lists.length, 2 * registered + heard.routes.filter((list) => !list.open).length,
    'every list, its counts and, unless it is open, its change feed')
  for (const [url, item] of lists) {
    const filter = item.get.parameters.find((p) => p.name === 'filter')
    const ref = filter?.content?.['application/json']?.schema.$ref ?? ''
    t.match(ref, /^#\/components\/schemas\/[A-Z][a-z]+Filter$/, `${url}: ${ref}`)
    t.ok(document.components.schemas[ref.split('/').pop() as string], `${url}: the component exists`)
  }
})
