// The demo writer changes the first demo project while it runs, and stops cleanly.
import t from 'tap'
import { seedDemoData } from '../../demo-data/seed.js'
import { startDemoWriter } from '../../demo-data/writer.js'
import { clientOfTestDatabase } from '../helpers/database.js'

t.test('the demo writer adds, changes and removes registrations of one project, and stops', async (t) => {
  const { db, client } = await clientOfTestDatabase('writer')
  const uri = (client.options.hosts.map((host) => `mongodb://${String(host)}/?directConnection=true`))[0] as string
  await seedDemoData(uri, db.databaseName, { scale: 0.05 })
  const lines: string[] = []
  const writer = await startDemoWriter(uri, db.databaseName, (line) => lines.push(line), 20)
  const before = await db.collection('registrations').countDocuments({ name: /^Visitor / })
  t.equal(before, 0)
  await new Promise((resolve) => setTimeout(resolve, 600))
  await writer.stop()
  const after = lines.length
  t.ok(lines.some((line) => line.includes('added')), 'it added registrations')
  t.ok(lines.some((line) => line.includes('is now')), 'it changed one')
  t.ok(lines.some((line) => line.includes('removed')), 'it removed one')
  t.ok(lines.some((line) => line.includes('renamed')), 'it renamed a session')
  t.same(lines.filter((line) => line.includes('writer: ') && /failed|error/i.test(line)), [])
  const added = await db.collection('registrations').find({ name: /^Visitor / }).toArray()
  t.ok(added.every((doc) => String(doc.project) === writer.project), 'only its project')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(lines.length, after, 'nothing is written after stop')
})
