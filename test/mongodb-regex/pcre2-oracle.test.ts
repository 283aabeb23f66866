// Whatever the service accepts as a $regex, MongoDB's engine compiles: each pattern of the
// corpus, under several option sets, is read by us and compiled by PCRE2 10.42 (UTF mode).
import t from 'tap'
import { checkPattern } from '../../mongodb-regex/check-pattern.js'
import { readPattern } from '../../mongodb-regex/read-pattern.js'
import { pcre2OracleOrSkip } from '../helpers/pcre2-oracle.js'
import { FLAG_SETS, MONGODB_REFUSES, MUST_ACCEPT, PCRE2_REFUSES, generatedPatterns } from './corpus.js'

const oracle = pcre2OracleOrSkip(t, 'PCRE2 oracle')
if (oracle !== undefined) {
  t.test('the patterns PCRE2 refuses: PCRE2 does, and so do we', async (t) => {
    for (const pattern of PCRE2_REFUSES) {
      const compiled = await oracle.compile(pattern)
      t.notOk(compiled.ok, `PCRE2 refuses ${JSON.stringify(pattern)}`)
      t.notOk(readPattern(pattern).ok, `we refuse ${JSON.stringify(pattern)} (PCRE2: ${compiled.error ?? ''})`)
    }
  })

  t.test('a NUL character, which MongoDB refuses before PCRE2 sees it', async (t) => {
    for (const pattern of MONGODB_REFUSES.filter((p) => p.includes('\0'))) t.match(readPattern(pattern), { ok: false, nul: true }, JSON.stringify(pattern))
  })

  t.test('the patterns clients write are accepted, safe, and compile in PCRE2', async (t) => {
    for (const pattern of MUST_ACCEPT) {
      t.same(checkPattern(pattern), { ok: true }, JSON.stringify(pattern))
      t.ok((await oracle.compile(pattern)).ok, `PCRE2 compiles ${JSON.stringify(pattern)}`)
    }
  })

  t.test('over the whole corpus and every option set, whatever we accept PCRE2 compiles', async (t) => {
    const corpus = [...new Set([...PCRE2_REFUSES, ...MUST_ACCEPT, ...generatedPatterns(400)])]
    t.ok(corpus.length >= 300, `${corpus.length} patterns`)
    let accepted = 0
    let refusedByBoth = 0
    const disagreements: string[] = []
    for (const flags of FLAG_SETS) {
      for (const pattern of corpus) {
        const ours = readPattern(pattern, flags)
        const theirs = await oracle.compile(pattern, flags)
        if (ours.ok) accepted++
        else if (!theirs.ok) refusedByBoth++
        if (ours.ok && !theirs.ok) disagreements.push(`/${pattern}/${flags}: PCRE2 says ${theirs.error ?? ''}`)
      }
    }
    t.same(disagreements, [], 'no pattern we accept is refused by PCRE2')
    t.comment(`${corpus.length} patterns × ${FLAG_SETS.length} option sets: ${accepted} accepted, ${refusedByBoth} refused by both`)
    t.ok(accepted > 500 && refusedByBoth > 500, 'the corpus exercises both sides')
  })
}
