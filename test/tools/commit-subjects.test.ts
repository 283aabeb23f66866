// Commit subjects of at most 72 characters, the detail in the body, so that `git log --oneline`
// reads. Held for every commit after the last one that broke it (older history is not rewritten).
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import t from 'tap'

const ROOT = new URL('../../', import.meta.url)
/** The commit time of the last subject over 72 characters (a5d408e); every later one is held to it. */
const SINCE = '2026-11-29T09:57:11Z'
const MAX_SUBJECT = 72

const skip = existsSync(new URL('.git', ROOT)) ? false : 'not a git checkout (a packed copy has no history)'

t.test(`commit subjects since ${SINCE} are at most ${MAX_SUBJECT} characters`, { skip }, (t) => {
  const log = execFileSync('git', ['log', `--since=${SINCE}`, '--format=%h %s'], { cwd: ROOT, encoding: 'utf8' })
  const subjects = log.split('\n').filter(Boolean)
  t.ok(subjects.length > 0, `${subjects.length} commits read`)
  const long = subjects.filter((line) => line.slice(line.indexOf(' ') + 1).length > MAX_SUBJECT)
  t.same(long, [], 'no subject longer')
  t.end()
})
