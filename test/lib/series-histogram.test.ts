// SeriesHistogram: the same /metrics text as prom-client's Histogram given the same observations.
import t from 'tap'
import fc from 'fast-check'
import { Histogram, Registry } from 'prom-client'
import { SeriesHistogram } from '../../lib/series-histogram.js'

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The two registries' texts for the same observations, each observed as its metric is meant to be. */
async function both (
  labelNames: string[],
  observations: Array<{ values: string[], value: number }>,
  buckets = BUCKETS
): Promise<[string, string]> {
  const theirs = new Registry()
  const ours = new Registry()
  const reference = new Histogram({
    name: 'duration_seconds', help: 'How long', labelNames, buckets, registers: [theirs]
  })
  const histogram = new SeriesHistogram('duration_seconds', 'How long', labelNames, buckets, ours)
  for (const { values, value } of observations) {
    reference.observe(Object.fromEntries(labelNames.map((name, i) => [name, values[i] as string])), value)
    histogram.observe(histogram.series(...values), value)
  }
  return [await ours.metrics(), await theirs.metrics()]
}

t.test('a labelled histogram writes what prom-client writes, for any observations', async (t) => {
  const labels = ['route', 'method', 'status_code']
  const observation = fc.record({
    values: fc.tuple(fc.constantFrom('/projects', '/projects/:projectId/sessions', 'unmatched'),
      fc.constantFrom('GET', 'HEAD'), fc.constantFrom('200', '400', '503')),
    // Values on the bounds themselves included: a value equal to a bound counts in its bucket.
    value: fc.oneof(fc.double({ min: 0, max: 20, noNaN: true }), fc.constantFrom(...BUCKETS, 0, 1e6))
  })
  await fc.assert(fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
    const [ours, theirs] = await both(labels, observations)
    t.equal(ours, theirs)
  }), { numRuns: 200 })
})

t.test('without labels; buckets given in any order', async (t) => {
  const observations = [0.0004, 0.003, 0.003, 0.7, 30].map((value) => ({ values: [], value }))
  const [ours, theirs] = await both([], observations, [0.001, 0.01, 1])
  t.equal(ours, theirs)
  t.match(ours, /duration_seconds_bucket\{le="0.01"\} 3\n/, 'cumulative counts')
  t.match(ours, /duration_seconds_count 5\n/)
  // prom-client takes its buckets as given; these are sorted.
  const [unsorted] = await both([], observations, [1, 0.01, 0.001])
  t.equal(unsorted.split('\n').filter((line) => line.startsWith('duration_seconds')).join('\n'),
    ours.split('\n').filter((line) => line.startsWith('duration_seconds')).join('\n'))
})

t.test('a series is kept per label values; reset forgets them; bad input is refused', async (t) => {
  const registry = new Registry()
  const histogram = new SeriesHistogram('d', 'd', ['a', 'b'], [1], registry)
  t.equal(histogram.series('x', 'y'), histogram.series('x', 'y'), 'the same series for the same values')
  t.not(histogram.series('x', 'y'), histogram.series('x', 'z'))
  t.not(histogram.series('x', 'y'), histogram.series('xy', ''), 'values are not joined into one key')
  histogram.observe(histogram.series('x', 'y'), 2)
  t.match(await registry.metrics(), /d_count\{a="x",b="y"\} 1/)
  registry.resetMetrics()
  t.notMatch(await registry.metrics(), /d_count\{a="x",b="y"\}/, 'reset forgets every series')
  t.throws(() => histogram.series('x'), /2 label values expected/)
  t.throws(() => { histogram.observe(histogram.series('x', 'y'), Number.NaN) }, TypeError)
  t.throws(() => new SeriesHistogram('e', 'e', [], [1, 1], registry), /distinct/)
  t.throws(() => new SeriesHistogram('d', 'd', [], [1], registry), /already been registered/,
    'one name per registry, as prom-client requires')
})
