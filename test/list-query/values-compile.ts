// A query string compiled for a kind by the pure compiler, expected to compile (ok) or to be refused
// (problem, the first one): the value rules' tests and the query-string parameters' tests share them.
import { compileFor } from '../helpers/list-query.js'

export const ok = (schema: Parameters<typeof compileFor>[0], query: string) => {
  const result = compileFor(schema, query)
  if (!result.ok) throw new Error(`expected ${query} to compile: ${JSON.stringify(result.problems)}`)
  return result.query
}
export const problem = (schema: Parameters<typeof compileFor>[0], query: string) => {
  const result = compileFor(schema, query)
  if (result.ok) throw new Error(`expected ${query} to be refused`)
  return result.problems[0]
}
