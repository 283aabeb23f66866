// With AUTH_MODE=jwt, /projects and /projects/changes are the caller's projects: a list's cursor
// and a feed's token are bound to the projects claim they were issued under (docs/changes.md,
// "Tokens"; docs/paging.md). Under another claim they are 400 CURSOR_MISMATCH, saying to start
// again, rather than a copy that never gains a project the claim gained nor drops one it lost.
// Without a claim ('*', AUTH_MODE=none) the binding is the one it always was.
import { createHash } from 'node:crypto'
import t from 'tap'
import { buildWithDemoData } from '../helpers/demo-app.js'
import { requireChangeStreams, type FeedAnswer } from '../helpers/feeds.js'
import { mint } from '../helpers/tokens.js'
import { unsealed } from '../../changes/feed-token.js'
import { get, startAccessControl } from '../plugins/access-control-setup.js'

const { ec, rsa, fastify, publicIds, privateIds } = await startAccessControl(t)
const [a, b] = publicIds as [string, string]
const c = privateIds[0] as string
const feeds = await requireChangeStreams(t)

/** The first of a cursor's four digests: its path's (list-endpoint/cursor.ts, version 2). */
const pathDigest = (cursor: string): string =>
  Buffer.from(cursor.slice(0, cursor.indexOf('.')), 'base64url').subarray(1, 9).toString('hex')
/** The path digest every cursor and token had before they were bound to a claim. */
const digestOf = (path: string): string => createHash('sha256').update(path).digest().subarray(0, 8).toString('hex')

/** The feed followed to an answer with no events: what a client's copy holds, and the token it keeps. */
async function follow (url: string, jwt: string): Promise<{ ids: string[], next: string }> {
  let answer = (await get(fastify, url, jwt)).json() as FeedAnswer
  const ids = new Set<string>()
  for (;;) {
    for (const event of answer.events) {
      if (event.type === 'upsert') ids.add(event._id)
      else ids.delete(event._id)
    }
    if (answer.synced && answer.events.length === 0) return { ids: [...ids].sort(), next: answer.next }
    answer = (await get(fastify, `${url}&since=${answer.next}`, jwt)).json() as FeedAnswer
  }
}

t.test('a /projects/changes token is refused under another claim, and read under the same', feeds, async (t) => {
  const url = '/projects/changes?limit=1000&fields=name'
  const copy = await follow(url, mint(ec, { projects: [a] }))
  t.same(copy.ids, [a], 'the copy holds the one project of the claim')
  const since = `${url}&since=${copy.next}`
  const again = await get(fastify, since, mint(rsa, { projects: [a] }))
  t.equal(again.statusCode, 200, 'a refreshed token with the same claim follows on')
  t.same((again.json() as FeedAnswer).events, [], 'with nothing new')
  for (const [what, projects] of [['every project', '*'], ['a project more', [a, b]], ['another', [b]]] as const) {
    const wider = await get(fastify, since, mint(ec, { projects }))
    t.equal(wider.statusCode, 400, `a claim of ${what}: refused`)
    const problem = wider.json() as { code: string, detail: string, errors: Array<{ param: string }> }
    t.equal(problem.code, 'CURSOR_MISMATCH')
    t.equal(problem.errors[0]?.param, 'since')
    t.match(problem.detail, /projects your token may read.*start again without since/, 'saying to list again')
  }
  const both = await follow(url, mint(ec, { projects: [a, c] }))
  t.same(both.ids, [a, c].sort(), 'listed again under the wider claim, the copy equals the list')
  const narrower = await get(fastify, `${url}&since=${both.next}`, mint(ec, { projects: [a] }))
  t.equal(narrower.statusCode, 400, 'a claim that lost a project: refused, not a copy that keeps it')
  t.equal(narrower.json().code, 'CURSOR_MISMATCH')
  const reordered = await get(fastify, `${url}&since=${both.next}`, mint(ec, { projects: [c, a] }))
  t.equal(reordered.statusCode, 200, 'the same projects in another order are the same claim')
})

t.test('a /projects cursor is refused under another claim, and read under the same', async (t) => {
  const first = await get(fastify, '/projects?limit=1&sort=%2B_id', mint(ec, { projects: [a, c] }))
  t.equal(first.statusCode, 200)
  const { next } = first.json() as { next: string }
  const url = `/projects?limit=1&sort=%2B_id&after=${next}`
  const same = await get(fastify, url, mint(rsa, { projects: [c, a] }))
  t.equal(same.statusCode, 200, 'the same claim walks on')
  t.same((same.json() as { data: Array<{ _id: string }> }).data.map((project) => project._id),
    [[a, c].sort()[1]], 'to the claim\'s second project')
  for (const projects of ['*', [a], [a, b, c]] as const) {
    const other = await get(fastify, url, mint(ec, { projects }))
    t.equal(other.statusCode, 400, `claim ${JSON.stringify(projects)}: refused`)
    const problem = other.json() as { code: string, detail: string }
    t.equal(problem.code, 'CURSOR_MISMATCH')
    t.match(problem.detail, /projects your token may read.*start again from the first page/)
  }
})

t.test('callers of one query under two claims each get a cursor of their own claim', async (t) => {
  // A compiled query, and the head of its cursors, are shared by every caller of the same URL.
  const url = '/projects?limit=1&sort=%2B_id&fields=name'
  for (const projects of [[a, c], [a, b], '*', [a, c]] as const) {
    const jwt = mint(ec, { projects })
    const { next } = (await get(fastify, url, jwt)).json() as { next: string }
    t.equal((await get(fastify, `${url}&after=${next}`, jwt)).statusCode, 200, `claim ${JSON.stringify(projects)}`)
  }
})

t.test('without a claim, cursors and tokens are bound as before: those issued earlier stay valid', async (t) => {
  const open = await buildWithDemoData(t)
  const { next: cursor } = (await get(open, '/projects?limit=1')).json() as { next: string }
  t.equal(pathDigest(cursor), digestOf('projects / undefined'), 'a /projects cursor with AUTH_MODE=none')
  const { next: everyProject } = (await get(fastify, '/projects?limit=1', mint(ec, { projects: '*' }))).json()
  t.equal(pathDigest(everyProject as string), digestOf('projects / undefined'), 'and with a claim of "*"')
  const { next: claimed } = (await get(fastify, '/projects?limit=1', mint(ec, { projects: [a, c] }))).json()
  t.not(pathDigest(claimed as string), digestOf('projects / undefined'), 'a claim of some projects binds them')
  const nested = await get(open, `/projects/${a}/sessions?limit=1`)
  t.equal(pathDigest((nested.json() as { next: string }).next), digestOf(`sessions / ${a}`), 'a nested list as before')
})

t.test('without a claim, feed tokens are bound as before', feeds, async (t) => {
  const open = await buildWithDemoData(t)
  const { next } = (await get(open, '/projects/changes?limit=1')).json() as FeedAnswer
  // A feed's token is sealed: its signed form holds the digests.
  t.equal(pathDigest(unsealed(open.textSeal, next)), digestOf('projects /changes undefined'),
    '/projects/changes with AUTH_MODE=none')
  const claimed = (await get(fastify, '/projects/changes?limit=1', mint(ec, { projects: [a] }))).json() as FeedAnswer
  t.not(pathDigest(unsealed(fastify.textSeal, claimed.next)), digestOf('projects /changes undefined'),
    'a claim of some projects binds them')
})
