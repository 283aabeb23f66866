import t from 'tap'
import { INDEXES } from '../../plugins/indexes.js'
import { build } from '../helpers/build.js'
import { until } from '../helpers/until.js'
import { NESTED_LISTS } from '../helpers/lists.js'

t.test('the list indexes exist after start-up, and a second start-up is a no-op', async (t) => {
  const fastify = await build(t)
  // Built in the background once the database first answers (plugins/indexes.ts); build() waits for them.
  const db = fastify.mongo.db
  if (db === undefined) throw new Error('no db')
  const keysOf = async (collection: string) =>
    (await db.collection(collection).listIndexes().toArray()).map((i) => JSON.stringify(i.key))
  t.ok((await keysOf('sessions')).includes(JSON.stringify({ project: 1, start: 1, _id: 1 })),
    'sessions by project and start')
  t.ok((await keysOf('registrations')).includes(
    JSON.stringify({ project: 1, 'sessionsSubscriptions.session': 1, _id: 1 })), 'registrations by subscribed session')
  t.ok((await keysOf('projects')).includes(JSON.stringify({ public: 1, _id: 1 })), 'public projects')
  for (const collection of NESTED_LISTS) {
    t.ok((await keysOf(collection)).includes(JSON.stringify({ project: 1, _id: 1 })), `${collection} by project`)
  }
  const before = await keysOf('activities')
  for (const [collection, indexes] of Object.entries(INDEXES)) await db.collection(collection).createIndexes(indexes)
  t.same(await keysOf('activities'), before, 'creating them again changes nothing')
})

t.test('the indexes are created once: the checks that follow send no createIndexes', async (t) => {
  const fastify = await build(t)
  let checks = 0
  let creations = 0
  fastify.database.readiness.onCheck((answered) => { if (answered) checks++ })
  fastify.database.client().on('commandStarted', (event) => { if (event.commandName === 'createIndexes') creations++ })
  t.ok(await until(() => checks >= 2, 10_000), 'two more checks answered')
  t.equal(creations, 0, 'no createIndexes after the first start-up')
})
