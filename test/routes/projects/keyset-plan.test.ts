// A page after a cursor costs what the first page costs: with real MongoDB (MONGODB_URI), the
// winning plan of a deep cursor page is an index scan bounded on the sort key, with no SKIP;
// and a sort on strings is read in order from the index built in the service's collation.
// The stand-in scans every collection and keeps no plan, so there is nothing to read there.
import { ObjectId, type Db, type Document } from 'mongodb'
import t from 'tap'
import { build } from '../../helpers/build.js'
import { testDatabase } from '../../helpers/database.js'

const database = await testDatabase()
if (database.kind === 'offline-mongodb') {
  t.comment('keyset plan: skipped on the offline stand-in (it scans and has no query plans); ' +
    'run with MONGODB_URI to check')
  t.skip('keyset plan needs a real MongoDB', () => {})
} else {
  t.test('a deep cursor page is an index range on the sort key, never a SKIP', async (t) => {
    const fastify = await build(t)
    const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
    const project = new ObjectId()
    await db.collection('projects').insertOne({ _id: project, name: 'plan' })
    const start = Date.UTC(2024, 0, 1)
    await db.collection('sessions').insertMany(Array.from({ length: 3000 }, (_, i) =>
      ({ project, name: `s${i}`, start: new Date(start + i * 60_000) })))
    const finds: Document[] = []
    fastify.mongo.client.on('commandStarted', (event) => {
      if (event.commandName === 'find' && event.command.find === 'sessions') finds.push(event.command)
    })
    let url = `/projects/${String(project)}/sessions?sort=%2Bstart&limit=100`
    for (let page = 0; page < 20; page++) {
      const res = await fastify.inject(url)
      url = (/^<http:\/\/[^/]+([^>]+)>/.exec(String(res.headers.link)) ?? [])[1] as string
    }
    const last = finds.at(-1) as Document
    const explained = await explain(db, last)
    const stages = stagesOf(explained)
    t.notOk(stages.some((s) => s.stage === 'SKIP'), 'no SKIP stage')
    t.ok(stages.some((s) => s.stage === 'IXSCAN' && 'start' in (s.keyPattern ?? {})), 'an index scan on the sort key')
    t.ok(explained.executionStats.totalDocsExamined <= 300,
      `documents examined at page 20: ${String(explained.executionStats.totalDocsExamined)}`)
  })

  t.test('a sort on a name, in the service\'s collation, is read from the collated index: no SORT stage', async (t) => {
    const fastify = await build(t)
    const db = fastify.mongo.db as NonNullable<typeof fastify.mongo.db>
    const project = new ObjectId()
    await db.collection('projects').insertOne({ _id: project, name: 'plan' })
    const names = ['Zoé', 'Émile', 'elodie', 'Élodie', 'de la Tour', 'Chloé', 'Léa', 'zoe']
    await db.collection('stewards').insertMany(Array.from({ length: 2000 }, (_, i) =>
      ({ project, name: `${names[i % names.length] as string} ${i % 97}` })))
    const finds: Document[] = []
    fastify.mongo.client.on('commandStarted', (event) => {
      if (event.commandName === 'find' && event.command.find === 'stewards') finds.push(event.command)
    })
    // Twice: the first read also looks the project up (one aggregate), the second is the page's own find.
    for (let i = 0; i < 2; i++) {
      t.equal((await fastify.inject(`/projects/${String(project)}/stewards?sort=%2Bname&limit=100`)).statusCode, 200)
    }
    const first = finds.at(-1) as Document
    t.same(first.collation, { locale: 'fr' }, 'the page is read in the service\'s collation')
    const stages = stagesOf(await explain(db, first))
    t.notOk(stages.some((s) => s.stage === 'SORT'), 'no SORT stage: the index gives the order')
    const scan = stages.find((s) => s.stage === 'IXSCAN')
    t.ok(scan !== undefined && 'name' in (scan.keyPattern ?? {}), 'an index scan on name')
    t.match(scan?.indexName, /_locale=fr$/, 'the collated index')
    // The same page in binary order finds no index in its collation for the strings: it sorts.
    const { collation: _collation, ...binary } = first
    t.ok(stagesOf(await explain(db, binary)).some((s) => s.stage === 'SORT'), 'in binary order, a SORT stage')
  })
}

async function explain (db: Db, find: Document): Promise<Document> {
  const { filter, sort, projection, limit, collation } = find
  return await db.command({
    explain: { find: find.find, filter, sort, projection, limit, ...(collation === undefined ? {} : { collation }) },
    verbosity: 'executionStats'
  })
}

function stagesOf (explained: Document): Document[] {
  const stages: Document[] = []
  const visit = (stage: Document | undefined) => {
    if (stage === undefined) return
    stages.push(stage)
    visit(stage.inputStage)
    for (const inner of stage.inputStages ?? []) visit(inner)
  }
  visit(explained.queryPlanner.winningPlan.queryPlan ?? explained.queryPlanner.winningPlan)
  return stages
}
