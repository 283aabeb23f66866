// The query-string pairs a next page's Link keeps.
import t from 'tap'
import { keptPairs } from '../../list-endpoint/paging.js'

t.test('keptPairs drops skip, after and empty pairs, and keeps the others in order', async (t) => {
  t.equal(keptPairs('/projects/x/sessions?sort=-start&skip=5&limit=3&&after=abc&count=true'),
    'sort=-start&limit=3&count=true&')
  t.equal(keptPairs('/projects?skipped=1&afterwards=2'), 'skipped=1&afterwards=2&',
    'only the names skip and after themselves')
  t.equal(keptPairs('/projects?skip=1'), '')
  t.equal(keptPairs('/projects'), '', 'no query string')
  t.equal(keptPairs('/projects?a=1?b'), 'a=1?b&', 'the query starts at the first ?')
})
