// The demo writer changes the first demo project while it runs, and stops cleanly.
import t from 'tap'
import { seedDemoData } from '../../demo-data/seed.js'
import { startDemoWriter } from '../../demo-data/writer.js'
import { clientOfTestDatabase } from '../helpers/database.js'
import { until } from '../helpers/until.js'

t.test('the demo writer adds, changes and removes registrations of one project, and stops', async (t) => {
  const { db, client } = await clientOfTestDatabase('writer')
  const uri = (client.options.hosts.map((host) => `mongodb://${String(host)}/?directConnection=true`))[0] as string
  await seedDemoData(uri, db.databaseName, { scale: 0.05 })
  const lines: string[] = []
  const writer = await startDemoWriter(uri, db.databaseName, (line) => lines.push(line), 20)
  const before = await db.collection('registrations').countDocuments({ name: /^Visitor / })
  t.equal(before, 0)
  const kinds = ['added', 'is now', 'removed', 'renamed']
  // Each kind of change, however long a busy machine takes to make them (every 20 ms).
  await until(() => kinds.every((kind) => lines.some((line) => line.includes(kind))), 15_000)
  await writer.stop()
  const after = lines.length
  t.ok(lines.some((line) => line.includes('added')), 'it added registrations')
  t.ok(lines.some((line) => line.includes('is now')), 'it changed one')
  t.ok(lines.some((line) => line.includes('removed')), 'it removed one')
  t.ok(lines.some((line) => line.includes('renamed')), 'it renamed a session')
  t.same(lines.filter((line) => line.includes('writer: ') && /failed|error/i.test(line)), [])
  const added = await db.collection('registrations').find({ name: /^Visitor / }).toArray()
  t.ok(added.every((doc) => String(doc.project) === writer.project), 'only its project')
  // An absence can only be watched for a while: five of its intervals.
  t.notOk(await until(() => lines.length > after, 100), 'nothing is written after stop')
  t.equal(lines.length, after)
})
