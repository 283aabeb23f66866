// A person in Swagger UI: open /docs, "Authorize" with a token and "Try it out" on the sessions
// list with a filter, see a 200 with data; "Execute" on each change feed as the page comes, see a
// 200. Headless Debian Chromium driven by playwright-core (no browser download), one browser for
// the file (each launch costs seconds of CPU), a context of its own for each test.
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'
import t, { type Test } from 'tap'
import type { BuildOptions } from '../helpers/build.js'
import { buildWithDemoData, list } from '../helpers/demo-app.js'
import { ALL_LISTS, listRoutes } from '../helpers/lists.js'
import { withoutTool } from '../helpers/required-tool.js'
import { jwtConfig, makeKey, mint } from '../helpers/tokens.js'

/**
 * The page's document, in the functions run in the browser (this program is typed for Node, without the DOM library).
 */
declare const document: { querySelector: (selector: string) => { textContent: string | null } | null }

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
// A browser rendering the whole OpenAPI document (every list, its counts and its feed), then
// resolving each operation opened, is CPU-bound: beside the rest of the suite under coverage it
// takes twice its time alone. Each step has its own bound (Playwright's 30 s, a status's 15 s).
t.setTimeout(240_000)

/** The file's browser, launched by the first test that asks, closed when the file ends. */
let launched: Promise<Browser> | undefined
function browser (): Promise<Browser> {
  if (launched === undefined) {
    launched = chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'
      ]
    })
    const closing = launched
    t.teardown(async () => { await (await closing).close() })
  }
  return launched
}

/** The app on demo data in Chromium, Swagger UI open. */
async function swaggerUi (t: Test, options: BuildOptions = {}) {
  const fastify = await buildWithDemoData(t, options)
  const address = await fastify.listen({ port: 0, host: '127.0.0.1' })
  const context = await (await browser()).newContext()
  t.teardown(() => context.close())
  const page = await context.newPage()
  await page.goto(`${address}/docs`)
  return { fastify, page }
}

/** The GET operation of `path`, opened, with "Try it out" on. */
async function tryOut (page: Page, path: string) {
  const operation = page.locator('.opblock-get', { has: page.locator(`[data-path="${path}"]`) })
  await operation.locator('.opblock-summary').click()
  // /docs enables "Try it out" by default (tryItOutEnabled); the button then reads "Cancel".
  const button = operation.locator('button.try-out__btn')
  if ((await button.innerText()).trim() === 'Try it out') await button.click()
  return operation
}

/** Swagger UI open, "Try it out" on the sessions list of a public project. */
async function sessionsInSwaggerUi (t: Test, options: BuildOptions = {}) {
  const { fastify, page } = await swaggerUi(t, options)
  const projectId = (await list(fastify, '/projects/public?limit=1')).data[0]?._id as string
  const operation = await tryOut(page, '/projects/{projectId}/sessions')
  await operation.locator('tr[data-param-name="projectId"] input').fill(projectId)
  return { fastify, page, operation, projectId }
}

if (!existsSync(CHROMIUM)) {
  withoutTool(t, 'Swagger UI in a browser', `no Chromium at ${CHROMIUM} (apt-get install chromium, or CHROMIUM_PATH)`)
} else {
  t.test('with AUTH_MODE=jwt: Try it out is 401; Authorize with a token, and the sessions list with a filter, ' +
    'then paged by hand, answers 200 with data', async (t) => {
    const key = makeKey('browser', 'ES256')
    const { fastify, page, operation, projectId } = await sessionsInSwaggerUi(t, { config: jwtConfig(key) })
    const token = mint(key, { projects: [projectId] })
    const status = operation.locator('.live-responses-table .response .response-col_status').first()
    await operation.locator('button.execute').click()
    await status.waitFor({ timeout: 15_000 })
    t.equal((await status.innerText()).trim(), '401', 'without a token')

    await page.locator('.auth-wrapper button.authorize').click()
    await page.locator('.modal-ux input').first().fill(token)
    await page.locator('.modal-ux .auth-btn-wrapper button.authorize').click()
    await page.locator('.modal-ux button.btn-done').click()
    // filter is JSON content (typed by SessionFilter): Swagger UI
    // offers it as a JSON editor, pre-filled with the example.
    const editor = operation.locator('tr[data-param-name="filter"] textarea')
    t.same(JSON.parse(await editor.inputValue()), { start: { $gte: '2024-06-14' }, end: { $lt: '2024-06-16' } },
      'the example filter, as JSON')
    await editor.fill('{"start":{"$gte":"2024-06-15"}}')
    await operation.locator('button.execute').click()
    await page.waitForFunction(() => document.querySelector('.live-responses-table .response .response-col_status')
      ?.textContent?.trim() === '200', undefined, { timeout: 15_000 })
    t.equal((await status.innerText()).trim(), '200', 'Try it out sends the token')
    const body = await operation.locator('.live-responses-table .response-col_description pre').first().innerText()
    const json = JSON.parse(body)
    t.ok(json.data.length > 0, 'sessions are listed')
    t.ok(json.data.every((s: { start: string }) => s.start >= '2024-06-15'), 'the filter was applied')
    t.ok(json.data.every((s: { project: string }) => s.project === projectId), 'within the project')

    // Paging by hand: a small page, then its `next` pasted into `after`, with the same filter.
    await operation.locator('tr[data-param-name="limit"] input').fill('2')
    await operation.locator('tr[data-param-name="fields"] input').fill('name,start')
    await operation.locator('button.execute').click()
    // The answer shown before had a `next` too: wait for the page of two.
    await page.waitForFunction(() => {
      const shown = document.querySelector('.live-responses-table .response-col_description pre')?.textContent ?? ''
      return /"limit":\s*2\b/.test(shown) && shown.includes('"next"')
    }, undefined, { timeout: 15_000 })
    const firstPage = JSON.parse(await operation.locator('.live-responses-table .response-col_description pre')
      .first().innerText())
    t.equal(firstPage.data.length, 2)
    t.ok(firstPage.data.every((s: Record<string, unknown>) =>
      Object.keys(s).every((k) => ['_id', 'name', 'start'].includes(k))), 'only the fields asked for')
    await operation.locator('tr[data-param-name="after"] input').fill(firstPage.next)
    await operation.locator('button.execute').click()
    await page.waitForFunction((previous) => {
      const text = document.querySelector('.live-responses-table .response-col_description pre')?.textContent ?? ''
      return text.includes('"data"') && !text.includes(previous)
    }, firstPage.next as string, { timeout: 15_000 })
    const secondPage = JSON.parse(await operation.locator('.live-responses-table .response-col_description pre')
      .first().innerText())
    const sort = await operation.locator('tr[data-param-name="sort"] input').inputValue()
    const bySkip = await fastify.inject({
      url: `/projects/${projectId}/sessions?filter=${encodeURIComponent('{"start":{"$gte":"2024-06-15"}}')}` +
        `&sort=${encodeURIComponent(sort)}&fields=name,start&limit=2&skip=2`,
      headers: { authorization: `Bearer ${token}` }
    })
    t.equal(bySkip.statusCode, 200)
    t.same(secondPage.data, bySkip.json().data, 'the cursor copied from the first answer gives the next page')
  })

  t.test('Execute on every change feed, as the page comes (its example filter and project), ' +
    'answers 200 with events', async (t) => {
    const heard = listRoutes()
    const { fastify, page } = await swaggerUi(t, { onRoute: heard.onRoute })
    const document = (await fastify.inject('/docs/json')).json()
    const feeds = Object.keys(document.paths).filter((path) => path.endsWith('/changes'))
    t.ok(heard.routes.length >= ALL_LISTS.length, `${heard.routes.length} lists registered`)
    t.equal(feeds.length, heard.routes.filter((list) => !list.open).length, 'a feed for every list that is not open')
    for (const path of feeds) {
      const operation = await tryOut(page, path)
      await operation.locator('button.execute').click()
      const status = operation.locator('.live-responses-table .response .response-col_status').first()
      await status.waitFor({ timeout: 15_000 })
      t.equal((await status.innerText()).trim(), '200', `${path}: 200`)
      const body = JSON.parse(await operation.locator('.live-responses-table .response-col_description pre')
        .first().innerText())
      t.ok(body.events.length > 0, `${path}: the demo documents the example matches`)
      // Closed again: the page keeps rendering only what is open.
      await operation.locator('.opblock-summary').click()
    }
  })
}
