// `npm run test:unit` is the tier that needs no database, network, browser, nginx or python: no
// file it runs reaches, through the imports it follows from the repository, what starts one.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { UNIT_FILES } from '../_groups/groups.js'

const ROOT = path.resolve(import.meta.dirname, '..', '..')

/** What a unit test must not reach (paths from the repository's root), and why. */
const FORBIDDEN: Record<string, string> = {
  'test/helpers/database.ts': 'the test database',
  'test/helpers/build.ts': 'the app on the test database',
  'test/helpers/pcre2-oracle.ts': "python's PCRE2 oracle",
  'test/faults/fault-proxy.ts': 'the fault proxy',
  'test/faults/fault-app.ts': 'the fault proxy',
  'test/faults/service-process.ts': 'a spawned service',
  'process/choose-database.ts': 'the embedded database'
}
/** Modules that start processes or servers, or reach a network. */
const FORBIDDEN_MODULES = ['node:child_process', 'mongodb-memory-server', 'playwright-core']

/** Every file of the repository that `file` imports, directly or through others, with what it imports from packages. */
async function closure (file: string): Promise<{ files: Set<string>, modules: Map<string, string> }> {
  const files = new Set<string>()
  const modules = new Map<string, string>()
  const todo = [file]
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    if (files.has(next)) continue
    files.add(next)
    const text = await readFile(path.join(ROOT, next), 'utf8')
    // Type-only imports load nothing at run time.
    for (const [, specifier] of text.matchAll(/^(?:import|export)\s(?!type\s)(?:[^'"]*?\sfrom\s+)?'([^']+)'/gm)) {
      if (specifier === undefined) continue
      if (!specifier.startsWith('.')) { modules.set(specifier, next); continue }
      todo.push(path.relative(ROOT, path.resolve(path.dirname(path.join(ROOT, next)), specifier)).replace(/\.js$/, '.ts'))
    }
    for (const [, specifier] of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) {
      if (specifier !== undefined && !specifier.startsWith('.')) modules.set(specifier, next)
    }
  }
  return { files, modules }
}

t.test('the unit tier reaches no database, fault proxy, spawned service or PCRE2 oracle', async (t) => {
  const files = UNIT_FILES
  t.ok(files.length >= 15, `${files.length} files in the unit tier`)
  for (const file of files) {
    const { files: reached, modules } = await closure(file)
    for (const [forbidden, what] of Object.entries(FORBIDDEN)) {
      t.notOk(reached.has(forbidden), `${file} does not reach ${what} (${forbidden})`)
    }
    for (const module of FORBIDDEN_MODULES) {
      t.notOk(modules.has(module), `${file} does not import ${module}${modules.has(module) ? ` (through ${modules.get(module) ?? ''})` : ''}`)
    }
  }
})

t.test('the check can fail: a file that builds the app reaches the test database', async (t) => {
  const { files } = await closure('test/list-query/logical-filters.test.ts')
  t.ok(files.has('test/helpers/database.ts'))
  const { modules } = await closure('client/test/walk.test.ts')
  t.ok(modules.has('node:child_process'))
})
