// The deprecated-option rules are proved by `npm run lint` itself, on a probe whose directives
// must each suppress a report (test/tools/deprecated-options.probe.ts): that proof holds only
// while the lint fails on a directive that suppresses nothing, and while the probe keeps its lines.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'

const ROOT = path.resolve(import.meta.dirname, '..', '..')

t.test('the lint fails on a directive that suppresses nothing', async (t) => {
  // Read, not imported: the configuration's plugins load only outside tsx's hooks, in ESLint's own process.
  const config = await readFile(path.join(ROOT, 'eslint.config.js'), 'utf8')
  t.same([...config.matchAll(/reportUnusedDisableDirectives: *'?(\w+)/g)].map(([, value]) => value), ['error'],
    'reportUnusedDisableDirectives, set once, to error')
})

t.test('the probe holds a line each rule must report', async (t) => {
  const probe = await readFile(path.join(import.meta.dirname, 'deprecated-options.probe.ts'), 'utf8')
  const rules = [...probe.matchAll(/eslint-disable-next-line (\S+) -- must be reported/g)].map(([, rule]) => rule)
  t.same(rules, ['local/no-deprecated-option', 'local/no-deprecated-option', '@typescript-eslint/no-deprecated'])
})
