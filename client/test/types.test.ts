// The client's types, proven by the compiler: test/types/ holds calls that must compile and
// calls marked @ts-expect-error that must not (a wrong operator for a field, a field of another
// kind, a missing project…); the example of examples/ is type-checked with them.
import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { NODE, nodeArgs } from '../../test/helpers/node-child.js'

const ROOT = path.join(import.meta.dirname, '..', '..')

t.test('tsc accepts every typed call and refuses every marked one', async (t) => {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const result = await promisify(execFile)(
    NODE, nodeArgs([tsc, '-p', path.join(import.meta.dirname, 'types')], { coverage: false })
  ).then(() => ({ stdout: '', ok: true }), (error: { stdout: string }) => ({ stdout: error.stdout, ok: false }))
  t.ok(result.ok, result.stdout)
})
