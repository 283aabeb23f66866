// The response schemas that Fastify's serializer (fast-json-stringify) writes from: none holds a
// union. For anyOf, oneOf or if/then/else the serializer compiles an Ajv validator on the route's
// first answer of that status, the event loop stopped meanwhile, and runs it on every value after
// (docs/performance.md, "Why it is fast" ("No union in a serialized answer")).
import type { RouteOptions } from 'fastify'
import t from 'tap'
import { build } from '../helpers/build.js'

/** The paths under `schema` where a union begins, `$ref`s to shared schemas followed. */
function unions (schema: unknown, shared: Record<string, unknown>, path = '', seen = new Set<unknown>()): string[] {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return []
  seen.add(schema)
  const found = ['anyOf', 'oneOf', 'if'].filter((key) => key in schema).map((key) => `${path}/${key}`)
  const ref = (schema as { $ref?: unknown }).$ref
  if (typeof ref === 'string') found.push(...unions(shared[ref.replace(/#$/, '')], shared, `${path}(${ref})`, seen))
  for (const [key, value] of Object.entries(schema)) found.push(...unions(value, shared, `${path}/${key}`, seen))
  return found
}

t.test('no response schema the serializer writes from holds a union', async (t) => {
  const routes: RouteOptions[] = []
  const fastify = await build(t, { onRoute: (route) => { routes.push(route) } })
  const shared = fastify.getSchemas() as Record<string, unknown>
  t.ok(
    routes.some((route) => route.url.endsWith('/counts')) && routes.some((route) => route.url.includes(':projectId')),
    `${routes.length} routes seen, counts and nested lists among them`
  )
  t.ok(
    shared.Problem !== undefined &&
    routes.some((route) => JSON.stringify(route.schema?.response ?? {}).includes('"$ref":"Problem"')),
    'problems refer to the shared schema, which the walk follows'
  )
  const found: string[] = []
  for (const route of routes) {
    const responses = (route.schema as { response?: Record<string, unknown> } | undefined)?.response ?? {}
    for (const [status, schema] of Object.entries(responses)) {
      // A feed writes its 200 as text itself (its events, or a stream): never through the serializer.
      if (route.url.endsWith('/changes') && status === '200') continue
      for (const path of unions(schema, shared)) found.push(`${String(route.method)} ${route.url} ${status}${path}`)
    }
  }
  t.same(found, [], 'no anyOf, oneOf or if in a serialized answer: problems, counts, lists, health')
})
