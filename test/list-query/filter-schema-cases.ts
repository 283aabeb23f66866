// The filters filter-schema.test.ts draws: those a filter schema describes, read from the schema
// itself, and filters of every shape, right and wrong, for the compiler to judge.
import fc from 'fast-check'
import type { JsonSchema } from '../../list-query/filter-schema.js'
import { OPERATORS } from '../../list-query/operators.js'
import type { QuerySpec } from '../../list-query/query-spec.js'

/**
 * A fast-check arbitrary of the JSON values a schema describes, read from the schema itself;
 * `$ref` is the schema's root (the filter in `$or`/`$and`), followed at most three levels down.
 */
const built = new WeakMap<JsonSchema, Map<number, fc.Arbitrary<unknown>>>()
export function arbitraryOf (schema: JsonSchema, root: JsonSchema = schema, depth = 0): fc.Arbitrary<unknown> {
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
      return fc.oneof(
        fc.integer({ min: -1000, max: 1000 }), fc.maxSafeInteger(), fc.double({ min, max, noNaN: true }),
        fc.constantFrom(min, max)
      )
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
      return fc.oneof(
        { weight: 9, arbitrary: fc.array(items, { maxLength: 4 }) },
        { weight: 1, arbitrary: fc.array(items, { minLength: max, maxLength: max }) }
      )
    }
    case 'object': {
      const properties = Object.fromEntries(
        Object.entries(schema.properties as Record<string, JsonSchema>).map(([key, value]) => [key, of(value)])
      )
      const record = (keys: string[]): fc.Arbitrary<Record<string, unknown>> =>
        fc.record(Object.fromEntries(keys.map((key) => [key, properties[key] as fc.Arbitrary<unknown>])))
      const names = Object.keys(properties).filter((key) => key !== '$or' && key !== '$and')
      const logicalNames = Object.keys(properties).filter((key) => key === '$or' || key === '$and')
      // $or/$and in one filter of four, not in a branch three levels down (the schema refuses a fourth level).
      const logical = logicalNames.length === 0 || depth >= 3
        ? fc.constant({})
        : fc.oneof(
          { weight: 3, arbitrary: fc.constant({}) },
          { weight: 1, arbitrary: fc.subarray(logicalNames, { minLength: 1 }).chain(record) }
        )
      const named = fc.tuple(
        fc.subarray(names, {
          minLength: Math.min(Number(schema.minProperties ?? 0), names.length),
          maxLength: Math.min(depth === 0 ? 3 : 2, names.length)
        }).chain(record),
        logical
      ).map(([a, b]) => ({ ...a, ...b }))
      const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, JsonSchema>)
      const patterned = patterns.length === 0
        ? fc.constant({})
        : fc.dictionary(
          fc.oneof(...patterns.map(([pattern]) => matching(pattern))),
          fc.oneof(...patterns.map(([, value]) => of(value))),
          { maxKeys: 2 }
        )
      return fc.tuple(named, patterned).map(([a, b]) => ({ ...a, ...b }))
    }
  }
  throw new Error(`no arbitrary for ${JSON.stringify(schema).slice(0, 80)}`)
}

// Filters of every shape, right and wrong: the fields and neighbours of their names, every
// operator and some that are not, and values of every type, some of them just out of bounds.
const hex24 = fc.stringMatching(/^[0-9a-fA-F]{24}$/)
export const dateLike = fc.oneof(
  fc.stringMatching(/^[0-9]{4}$/),
  fc.stringMatching(/^[0-9]{4}-[0-3][0-9]-[0-3][0-9]$/),
  fc.stringMatching(
    /^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\.[0-9]{3})?(Z|[+-][0-2][0-9]:[0-6][0-9])$/
  )
)
const scalar = fc.oneof(
  fc.string({ maxLength: 6 }), hex24, dateLike, fc.boolean(), fc.constant(null),
  fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(2 ** 53, -(2 ** 53), 2 ** 53 + 2, 1.5, 2 ** 31 - 1, 2 ** 31),
  fc.constantFrom('i', 'im', 'ii', 'xsmi', 'g', ''), fc.stringMatching(/^[a-z]{0,4}$/)
)
const operand = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 3, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.array(hex24, { minLength: 100, maxLength: 101 }) },
  { weight: 1, arbitrary: fc.constantFrom({}, { a: 1 }, [[1]]) }
)
const operatorKey = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...OPERATORS) },
  { weight: 1, arbitrary: fc.constantFrom('$or', '$where', '$not', 'plain', '$regexp', '$elemMatch') }
)
const condition = fc.oneof(operand, fc.dictionary(operatorKey, operand, { minKeys: 0, maxKeys: 3 }))

function keysOf (spec: QuerySpec): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...spec.fields.keys()) },
    { weight: 2, arbitrary: fc.stringMatching(/^customFields\.[A-Za-z0-9_-]{1,6}$/) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'project', 'customFields', 'customFields.', 'customFields.a.b', 'customFields.__proto__',
        'customFields.constructor', '$and', 'category.name', 'Name', 'nmae', '', 'customFields.' + 'x'.repeat(65)
      )
    }
  )
}

/**
 * Filters of field conditions and of $or/$and, right and wrong: branches of every count and kind,
 * nested up to four deep.
 */
export function filterOf (
  spec: QuerySpec, depth = 0, fields = fc.dictionary(keysOf(spec), condition, { maxKeys: 3 })
): fc.Arbitrary<unknown> {
  if (depth >= 4) return fields
  const branch = filterOf(spec, depth + 1, fields)
  const branches = fc.oneof(
    { weight: 12, arbitrary: fc.array(branch, { minLength: 1, maxLength: 3 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        [], {}, 'x', [1], [null], [[]], Array.from({ length: 10 }, () => ({})), Array.from({ length: 11 }, () => ({}))
      )
    }
  )
  const logical = fc.dictionary(fc.constantFrom('$or', '$and'), branches, { maxKeys: 2 })
  return fc.oneof(
    { weight: depth === 0 ? 1 : 3, arbitrary: fields },
    { weight: 2, arbitrary: fc.tuple(fields, logical).map(([a, b]) => ({ ...a, ...b })) }
  )
}
