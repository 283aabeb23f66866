// The revalidations' shared reads (changes/entity-tags.ts): a request shares a read that
// begins after it arrived, never one already under way, which could miss a change it must see.
import t from 'tap'
import { SharedProbes } from '../../changes/entity-tags.js'
import type { Gathered } from '../../changes/recent-changes.js'

t.test('a read under way serves only those who came before it; the next serves everyone after', async (t) => {
  const probes = new SharedProbes()
  const started: Array<(value: Gathered) => void> = []
  const read = async (): Promise<Gathered> => await new Promise((resolve) => { started.push(resolve) })
  const idsOf = (gathered: Gathered): unknown[] => gathered.lost ? [] : gathered.ids
  const answer = (n: number): Gathered => ({
    lost: false,
    ids: Array.from({ length: n }, (_, i) => i),
    point: { resumeToken: { _data: String(n) } },
    committedAt: []
  })
  const first = probes.run('k', read)
  const second = probes.run('k', read)
  const third = probes.run('k', read)
  t.equal(started.length, 1, 'one read under way')
  started[0]?.(answer(1))
  t.same(idsOf(await first), [0], 'the first request has the read it started')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(started.length, 2, 'then one more read, for the two that came while it ran')
  started[1]?.(answer(2))
  t.same([idsOf(await second).length, idsOf(await third).length], [2, 2], 'both share it')
  const other = probes.run('another point', read)
  t.equal(started.length, 3, 'another point, another read')
  started[2]?.(answer(3))
  t.equal(idsOf(await other).length, 3)
  const later = probes.run('k', read)
  t.equal(started.length, 4, 'after the reads ended, a request starts its own')
  started[3]?.(answer(4))
  t.equal(idsOf(await later).length, 4)
})
