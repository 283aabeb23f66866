// docs/errors.md and docs/configuration.md are written by `npm run docs` from the code's own
// list of error codes (with the service's real answers) and from the configuration schema:
// this fails when either page is behind the code.
import { readFile } from 'node:fs/promises'
import t from 'tap'
import { readSection } from '../../lib/generated-section.js'
import { COMMAND, PAGES, renderPages } from '../../tools/reference-docs.js'
import { ConfigSchema } from '../../schemas/config.js'
import { ERROR_CODES } from '../../schemas/problem.js'
import { buildWithDemoData } from '../helpers/demo-app.js'

t.test('the generated reference pages are what the code writes (npm run docs)', async (t) => {
  const fastify = await buildWithDemoData(t)
  const pages = await renderPages(async (request) => await fastify.inject(request))
  for (const [name, file] of Object.entries(PAGES) as Array<[keyof typeof PAGES, string]>) {
    const written = readSection(await readFile(file, 'utf8'), COMMAND, file).trim()
    t.equal(written, pages[name].trim(), `${file} is up to date (run npm run docs)`)
  }
})

t.test('every error code and every variable has its entry', async (t) => {
  const errors = await readFile(PAGES.errors, 'utf8')
  for (const code of ERROR_CODES) t.match(errors, new RegExp(`^### ${code}$`, 'm'), code)
  const configuration = await readFile(PAGES.configuration, 'utf8')
  for (const name of Object.keys(ConfigSchema.properties)) t.match(configuration, `| \`${name}\` |`, name)
})
