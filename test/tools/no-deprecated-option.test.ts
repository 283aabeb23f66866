// `npm run lint` fails on a deprecated driver option wherever it is written: in a typed object
// (typescript-eslint's no-deprecated) and in an options object passed straight to a call, which
// that rule misses (tools/eslint/no-deprecated-option.js). The probe is linted with the
// repository's own configuration, by ESLint in a node of its own (as `npm run lint` runs it).
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { NODE, nodeArgs } from '../helpers/node-child.js'

const ROOT = path.resolve(import.meta.dirname, '..', '..')
const PROBE = 'test/tools/probe.ts'

const SOURCE = `import type { Db, RunCommandOptions } from 'mongodb'

export async function probe (db: Db): Promise<void> {
  await db.admin().command({ hello: 1 }, { timeoutMS: 1000 })
  await db.listCollections({ name: 'sessions' }, { timeoutMS: 1000 }).toArray()
  const typed: RunCommandOptions = { timeoutMS: 1000 }
  await db.command({ ping: 1 }, { ...typed, maxTimeMS: 1000, signal: AbortSignal.timeout(1000) })
}
`

/** Lints `source` as the file PROBE, which is no file of the repository's program: it gets a program of its own. */
const LINT = `
import { ESLint } from 'eslint'
const eslint = new ESLint({ overrideConfig: [{ files: ['${PROBE}'], ` +
  `languageOptions: { parserOptions: { project: false, projectService: { allowDefaultProject: ['${PROBE}'] } } } }] })
const [result] = await eslint.lintText(process.env.PROBE_SOURCE, { filePath: '${PROBE}' })
process.stdout.write(JSON.stringify(result.messages.map((m) => m.line + ' ' + (m.ruleId ?? m.message))))
`

t.test('a deprecated option fails the lint, in an options object or a typed one; a current one passes', async (t) => {
  const output = execFileSync(NODE, nodeArgs(['--input-type=module', '-e', LINT], { coverage: false }),
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PROBE_SOURCE: SOURCE } })
  t.same(JSON.parse(output),
    ['4 local/no-deprecated-option', '5 local/no-deprecated-option', '6 @typescript-eslint/no-deprecated'],
    'timeoutMS on lines 4 to 6, and nothing else')
})
