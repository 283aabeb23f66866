// Commit subjects of at most 72 characters, the detail in the body, so that `git log --oneline`
// reads. Held for every commit after the last one that broke it (older history is not rewritten).
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import t from 'tap'

const ROOT = new URL('../../', import.meta.url)
/** Commits after a5d408e, the last subject over 72 characters, are held to MAX_SUBJECT. */
const FROM = 'a5d408e'
const MAX_SUBJECT = 72

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' })
const skip = existsSync(new URL('.git', ROOT)) ? false : 'not a git checkout (a packed copy has no history)'

t.test(`commit subjects after ${FROM} are at most ${MAX_SUBJECT} characters`, { skip }, (t) => {
  // A shallow clone may lack FROM: the commits after it cannot be told apart, so the test says why it fails.
  if (spawnSync('git', ['cat-file', '-e', `${FROM}^{commit}`], { cwd: ROOT }).status !== 0) {
    t.fail(git('rev-parse', '--is-shallow-repository').trim() === 'true'
      ? `a shallow clone, without ${FROM}: fetch the whole history (git fetch --unshallow) to check the subjects`
      : `${FROM} is not in this repository's history`)
    t.end()
    return
  }
  const subjects = git('log', `${FROM}..HEAD`, '--format=%h %s').split('\n').filter(Boolean)
  t.ok(subjects.length > 0, `${subjects.length} commits read`)
  const long = subjects.filter((line) => line.slice(line.indexOf(' ') + 1).length > MAX_SUBJECT)
  t.same(long, [], 'no subject longer')
  t.end()
})
