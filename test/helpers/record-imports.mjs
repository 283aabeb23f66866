// `node --import ./test/helpers/record-imports.mjs`: appends every module URL that ESM resolution
// hands out to the file named by RECORD_IMPORTS_TO, so a test can tell what a process loaded.
import { register } from 'node:module'

const hooks = `
import { appendFileSync } from 'node:fs'
export async function resolve (specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(${JSON.stringify(process.env.RECORD_IMPORTS_TO)}, resolved.url + '\\n')
  return resolved
}`
if (process.env.RECORD_IMPORTS_TO) register(`data:text/javascript,${encodeURIComponent(hooks)}`)
