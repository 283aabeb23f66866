// Without CURSOR_SECRET (outside production), the key that signs cursors and feed tokens is
// kept in CURSOR_KEY_FILE: a restart of the service takes the cursors and tokens of the one
// before, and the start-up log says where the key is and that production needs CURSOR_SECRET.
import { stat } from 'node:fs/promises'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Db } from 'mongodb'
import t, { type Test } from 'tap'
import { build } from '../helpers/build.js'
import { prepareFeeds } from '../helpers/feeds.js'

/** A list cursor and a feed token of `fastify`, on two projects of its database. */
async function cursorAndToken (fastify: FastifyInstance): Promise<{ after: string, since: string }> {
  const db = fastify.mongo.db as Db
  await prepareFeeds(db)
  await db.collection('projects').insertMany([{ name: 'A' }, { name: 'B' }])
  const after = (await fastify.inject('/projects?limit=1')).json().next as string
  const since = (await fastify.inject('/projects/changes')).json().next as string
  return { after, since }
}

/** The answers of a restarted service (a new app on the same database) to them. */
async function restarted (t: Test, first: FastifyInstance, config: Record<string, string>,
  logLines: Array<Record<string, unknown>> = []) {
  const second = await build(t, { config: { ...config, MONGODB_DB: first.config.MONGODB_DB }, logLines })
  return {
    list: async (after: string) => await second.inject(`/projects?limit=1&after=${after}`),
    feed: async (since: string) => await second.inject(`/projects/changes?since=${since}`)
  }
}

const keyLine = (lines: Array<Record<string, unknown>>): string | undefined =>
  lines.map((line) => String(line.msg)).find((msg) => msg.includes('CURSOR_SECRET is unset'))

t.test('a restart keeps cursors and feed tokens good: the key is kept in CURSOR_KEY_FILE, ' +
  'and the log says where', async (t) => {
  const file = path.join(t.testdir(), 'cache', 'cursor-key')
  const firstLines: Array<Record<string, unknown>> = []
  const first = await build(t, { config: { CURSOR_KEY_FILE: file }, logLines: firstLines })
  const { after, since } = await cursorAndToken(first)
  t.match(keyLine(firstLines), `just written to ${file}`, 'the first start says where it wrote the key')
  t.match(keyLine(firstLines), 'production requires CURSOR_SECRET', 'and what production needs')
  const secondLines: Array<Record<string, unknown>> = []
  const second = await restarted(t, first, { CURSOR_KEY_FILE: file }, secondLines)
  t.match(keyLine(secondLines), `kept in ${file}`, 'the next start says it reads it back')
  t.equal((await second.list(after)).statusCode, 200, 'the list cursor of the first start is taken')
  t.equal((await second.feed(since)).statusCode, 200, 'the feed token of the first start is taken')
})

t.test('CURSOR_KEY_FILE=off, or a file that cannot be kept: a key of the process, ' +
  'and a restart refuses its tokens', async (t) => {
  const off: Array<Record<string, unknown>> = []
  const first = await build(t, { config: { CURSOR_KEY_FILE: 'off' }, logLines: off })
  const { after, since } = await cursorAndToken(first)
  t.match(keyLine(off), /random key of this process.*production requires CURSOR_SECRET/)
  const second = await restarted(t, first, { CURSOR_KEY_FILE: 'off' })
  t.match((await second.list(after)).json(), { status: 400, code: 'INVALID_CURSOR' })
  t.match((await second.feed(since)).json(), { status: 400, code: 'INVALID_CURSOR', errors: [{ param: 'since' }] })

  // A folder that is a file: the key cannot be kept, and the service starts all the same.
  const blocked = path.join(t.testdir({ 'not-a-folder': 'x' }), 'not-a-folder', 'cursor-key')
  const lines: Array<Record<string, unknown>> = []
  const fastify = await build(t, { config: { CURSOR_KEY_FILE: blocked }, logLines: lines })
  t.match(keyLine(lines), `cannot be kept in ${blocked} (ENOTDIR)`)
  t.equal((await fastify.inject('/projects?limit=1')).statusCode, 200)
})

t.test('CURSOR_SECRET, when set, signs: no key file is written', async (t) => {
  const file = path.join(t.testdir(), 'cursor-key')
  const lines: Array<Record<string, unknown>> = []
  await build(t,
    { config: { CURSOR_SECRET: 'a-cursors-test-secret-of-32-bytes!', CURSOR_KEY_FILE: file }, logLines: lines })
  t.equal(keyLine(lines), undefined, 'nothing said of a development key')
  await t.rejects(stat(file), { code: 'ENOENT' }, 'no key file')
})
