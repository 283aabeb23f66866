// The demo writer changes the first demo project while it runs, and stops cleanly.
import t from 'tap'
import { seedDemoData } from '../../demo-data/seed.js'
import { startDemoWriter } from '../../demo-data/writer.js'
import { clientOfTestDatabase } from '../helpers/database.js'
import { until } from '../helpers/until.js'

/** The writer's clock, moved by hand: tick() is one interval passing, and says how many writes it started. */
function handClock () {
  const ticks = new Set<() => void>()
  return {
    schedule: (tick: () => void) => {
      ticks.add(tick)
      return () => { ticks.delete(tick) }
    },
    tick: (): number => {
      for (const tick of ticks) tick()
      return ticks.size
    }
  }
}

t.test('the demo writer adds, changes and removes registrations of one project, and stops', async (t) => {
  const { db, client } = await clientOfTestDatabase('writer')
  const uri = (client.options.hosts.map((host) => `mongodb://${String(host)}/?directConnection=true`))[0] as string
  await seedDemoData(uri, db.databaseName, { scale: 0.05 })
  const lines: string[] = []
  const clock = handClock()
  const writer = await startDemoWriter(uri, db.databaseName, (line) => lines.push(line), undefined, clock.schedule)
  const before = await db.collection('registrations').countDocuments({ name: /^Visitor / })
  t.equal(before, 0)
  // One interval for each kind of change, in its order; each write is awaited on the database.
  for (const kind of ['added', 'is now', 'removed', 'renamed']) {
    const written = lines.length
    t.equal(clock.tick(), 1, 'an interval starts one write')
    t.ok(await until(() => lines.length > written, 15_000), `a write ends (${kind})`)
    t.match(lines.at(-1), kind, `and says "${kind}"`)
  }
  // A write in flight when stop() is called is finished (and told) before stop() resolves.
  const inFlight = lines.length
  clock.tick()
  clock.tick() // an interval that passes while a write is under way starts none
  await writer.stop()
  t.equal(lines.length, inFlight + 1, 'one write at a time, and stop waits for it')
  const done = /^demo writer: (registration \w+ (added|removed|is now .+)|session \w+ renamed)$/
  t.same(lines.filter((line) => !done.test(line)), [], 'every write was made (none failed, none found nothing to do)')
  const added = await db.collection('registrations').find({ name: /^Visitor / }).toArray()
  t.not(added.length, 0, 'the registration it added last is there')
  t.ok(added.every((doc) => String(doc.project) === writer.project), 'in its project only')
  // After stop, intervals pass and start no write: the writer's timer is gone.
  t.equal(clock.tick(), 0, 'no write starts after stop')
  t.equal(lines.length, inFlight + 1, 'nothing is written after stop')
})
