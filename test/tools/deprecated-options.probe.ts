// Held by `npm run lint`, not run: each directive below names the rule that must report the line
// after it, and the lint fails on a directive that suppresses nothing (eslint.config.js,
// reportUnusedDisableDirectives), so a rule that stops reporting fails the lint, as does a report
// on the last line, whose options are current.
import type { Db, RunCommandOptions } from 'mongodb'

export async function probe (db: Db): Promise<void> {
  // An options object passed straight to an optional parameter: the local rule's
  // (tools/eslint/no-deprecated-option.js).
  // eslint-disable-next-line local/no-deprecated-option -- must be reported
  await db.admin().command({ hello: 1 }, { timeoutMS: 1000 })
  // eslint-disable-next-line local/no-deprecated-option -- must be reported
  await db.listCollections({ name: 'sessions' }, { timeoutMS: 1000 }).toArray()
  // A typed object: typescript-eslint's no-deprecated.
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- must be reported
  const typed: RunCommandOptions = { timeoutMS: 1000 }
  await db.command({ ping: 1 }, { ...typed, readPreference: 'primary', signal: AbortSignal.timeout(1000) })
}
