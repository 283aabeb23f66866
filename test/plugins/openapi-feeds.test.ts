// The change feeds as Swagger UI and a validating proxy (Prism, say) see them: each feed's filter
// example is one it accepts, so that "Execute" answers 200 as the page comes; its tag is
// described; its answers, as JSON and as NDJSON lines, are what the document says; HEAD is there.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import t from 'tap'
import { buildWithDemoData } from '../helpers/demo-app.js'
import { ALL_LISTS, listRoutes } from '../helpers/lists.js'

interface Operation {
  tags: string[]
  parameters: Array<{ name: string, in: string, example?: unknown, content?: Record<string, { example?: unknown }> }>
  responses: Record<string, { content?: Record<string, { schema: object }> }>
}

const NDJSON = 'application/x-ndjson'

t.test('every feed has a filter example it accepts, a described tag, its JSON and NDJSON answers as documented, ' +
  'and HEAD', async (t) => {
  // Streams that end after a second, so that their every line can be read.
  const heard = listRoutes()
  const fastify = await buildWithDemoData(t, { config: { CHANGES_STREAM_SECONDS: 1 }, onRoute: heard.onRoute })
  const document = (await fastify.inject('/docs/json')).json()
  t.match(document.tags.find((tag: { name: string }) => tag.name === 'changes'),
    { description: /copy of a list in sync/ }, 'the changes tag is described')
  const feeds = Object.entries(document.paths as Record<string, { get: Operation, head?: Operation }>)
    .filter(([url]) => url.endsWith('/changes'))
  t.ok(heard.routes.length >= ALL_LISTS.length, `${heard.routes.length} lists registered`)
  t.equal(feeds.length, heard.routes.filter((list) => !list.open).length, 'a feed for every list that is not open')
  // A response schema with the document's components, where its $refs point.
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true })
  const validator = (schema: object | undefined): ValidateFunction =>
    ajv.compile({ ...schema, components: document.components })

  await Promise.all(feeds.map(async ([template, item]) => {
    const operation = item.get
    t.same(operation.tags, ['changes'], `${template}: tagged changes`)
    const param = (name: string) => operation.parameters.find((p) => p.name === name)
    const filter = param('filter')?.content?.['application/json']?.example
    t.ok(filter !== undefined, `${template}: a filter example`)
    const url = `${template.replace('{projectId}', String(param('projectId')?.example))}` +
      `?filter=${encodeURIComponent(JSON.stringify(filter))}`

    const res = await fastify.inject(url)
    t.equal(res.statusCode, 200, `${template}: its example is accepted (${res.body.slice(0, 200)})`)
    const content = operation.responses['200']?.content ?? {}
    t.same(Object.keys(content), ['application/json', NDJSON],
      `${template}: 200 as JSON (first, what Swagger UI asks for) or NDJSON`)
    const json = validator(content['application/json']?.schema)
    t.ok(json(res.json()), `${template}: the JSON answer is as documented ${JSON.stringify(json.errors)}`)
    t.ok(res.json().events.length > 0, `${template}: the example lists demo documents`)

    const stream = await fastify.inject({ url, headers: { accept: NDJSON } })
    t.match(stream.headers['content-type'], NDJSON)
    const line = validator(content[NDJSON]?.schema)
    const lines = stream.body.split('\n').filter((text) => text !== '').map((text) => JSON.parse(text) as unknown)
    t.ok(lines.length > 1, `${template}: a stream of ${lines.length} lines`)
    t.same(lines.filter((value) => !line(value)), [], `${template}: every line is as documented`)

    t.ok(item.head, `${template}: HEAD is described`)
  }))
})
