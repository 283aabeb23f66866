// The HTTP benchmark's results as tables (bench/report.ts prints them or writes them into a page).
import { ENCODINGS } from '../plugins/compression.js'
import { compressionLevelsTable } from './compression.js'
import type { HttpResult, RunFigure } from './http-types.js'
import type { Table } from './report.js'
import { spreadText } from './timing.js'
import { stagesTable } from './stages.js'
import { feedsTables } from './feed-tables.js'

/** The collector's share of a run: where a p99 that wanders comes from. */
function gcColumns (run: RunFigure): Record<string, string | number> {
  const { gc, duration } = run
  if (gc === undefined) return {}
  const full = gc.major.ms + gc.incremental.ms
  return {
    'scavenge ms/s': (gc.minor.ms / duration).toFixed(1),
    'full GC ms/s': (full / duration).toFixed(1),
    'full GCs': gc.major.count,
    'longest pause ms': gc.longestMs.toFixed(1)
  }
}

/** The query mix against the floor, run by run, with the warm-up and the collector's share. */
function mixTables (result: HttpResult): Table[] {
  const { mix } = result
  const replay = result.database.replay
  if (mix === undefined) return []
  const rounds = mix.runs.length / 3
  return [{
    title: `HTTP benchmark: the query mix (${mix.names.join('; ')}) against ${result.database.kind}` +
      `${replay === undefined
        ? ''
        : `, replayed (${replay.recorded} replies recorded; ${replay.hits} answered from memory, ` +
          `${replay.misses} passed through)`}`,
    rows: mix.runs.map((r, i) => ({
      run: `${Math.floor(i / 3) + 1} ${r.target}`,
      'req/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      'CPU µs/req': Math.round(r.cpuUsPerRequest),
      errors: r.errors,
      ...gcColumns(r)
    })),
    notes: [
      'Warm-up, CPU µs per request of each 2-s round until two agree within 3 %: ' +
        `${Object.entries(mix.warmUp).map(([target, warm]) => `${target} ${warm.map(Math.round).join(' → ')}`)
          .join('; ')}.`,
      `Service/floor, median (min–max) over ${rounds} rounds: CPU per request ${spreadText(mix.ratios.cpu)} ` +
        `[target ≤ 0.45], p99 ${spreadText(mix.ratios.p99)} [target ≤ 0.6], req/s ${spreadText(mix.ratios.rps)}.`,
      `Raw floor/floor: CPU per request ${spreadText(mix.ratios.rawFloorCpu)}.`,
      'GC: the collector\'s pauses in the server during the run (node:perf_hooks), in ms per second of the run: ' +
        'scavenges of the young generation, and full collections with the incremental marking steps that lead ' +
        'to them; their count, and the longest single pause.'
    ]
  }]
}

/** Each request shape alone, service against floor. */
function growthTables (result: HttpResult): Table[] {
  const { growth } = result
  if (growth === undefined) return []
  return [{
    title: 'Growth: one request shape at a time, service against floor ' +
      '(median CPU µs per request; ratio median (min–max))',
    rows: growth.map((g) => ({
      load: g.load,
      'service µs': Math.round(g.serviceCpuUs),
      'floor µs': Math.round(g.floorCpuUs),
      'service/floor': spreadText(g.ratio),
      'p99 ms service/floor': `${g.serviceP99}/${g.floorP99}`
    }))
  }]
}

/** Each load against the same question asked another way. */
function languageTables (result: HttpResult): Table[] {
  const replay = result.database.replay
  if (result.language === undefined) return []
  return [{
    title: 'The reader\'s language: each load against the same question asked another way, interleaved ' +
      '(median CPU µs per request; ratio median (min–max))',
    rows: result.language.map((l) => ({
      load: l.load,
      against: l.against,
      µs: Math.round(l.cpuUs),
      'against µs': Math.round(l.againstCpuUs),
      ratio: spreadText(l.ratio),
      'p99 ms': `${l.p99}/${l.againstP99}`
    })),
    notes: [`Against ${result.database.kind}${replay === undefined
      ? ''
      : ', replayed: the database\'s work (where a collation compares strings) is not in these figures; ' +
        'run with --database direct to include it'}.`]
  }]
}

/** The driver's share of a page and of its count. */
function driverTables (result: HttpResult): Table[] {
  const { driver } = result
  if (driver === undefined) return []
  return [{
    title: 'The driver\'s share of a page and of its count: client CPU µs per read (median of 5 rounds of 1,500, ' +
      '10 in flight); a page is read as findPage (Db#command, raw), FindCursor raw + toArray, FindCursor ' +
      'decoded + toArray; a count as countMatching (Db#command), AggregationCursor raw + toArray, countDocuments',
    rows: driver.map((d) => ({
      read: d.page,
      'the service\'s way': d.way,
      'its µs': Math.round(d.serviceUs),
      'raw cursor µs': Math.round(d.rawCursorUs),
      'decoded µs': Math.round(d.cursorUs),
      'service / raw cursor': d.ratio.toFixed(2),
      'service / decoded': d.vsDecoded.toFixed(2)
    }))
  }]
}

/** The compression levels, and each page sent compressed as the client asks. */
function compressionTables (result: HttpResult): Table[] {
  const { compression } = result
  if (compression === undefined) return []
  const { encodings } = compression
  return [compressionLevelsTable(compression.levels), {
    title: `Compressed answers: the service sending each page as the client asks (${ENCODINGS.join(', ')} ` +
      'at the levels of plugins/compression.ts), CPU per request against identity, interleaved',
    rows: encodings.map((e) => ({
      page: e.page,
      encoding: e.encoding,
      bytes: e.bytes,
      'share of identity': (e.bytes /
        (encodings.find((x) => x.page === e.page && x.encoding === 'identity')?.bytes ?? e.bytes)).toFixed(3),
      'CPU µs/req': Math.round(e.cpuUsPerRequest),
      'CPU / identity': spreadText(e.cpuRatio),
      'p99 ms': e.p99
    })),
    notes: [
      '[Target on the 100-document page, for the encoding a client asking for all gets: ' +
        '≤ 0.2 of the bytes, CPU ≤ 1.25 × identity.]'
    ]
  }]
}

/** Polls of an unchanged list, with and without If-None-Match. */
function conditionalTables (result: HttpResult): Table[] {
  if (result.conditional === undefined) return []
  const { path, figures, ratio } = result.conditional
  return [{
    title: `Polls of an unchanged list (${path}), with and without If-None-Match, interleaved, ` +
      'against the database itself (medians)',
    rows: figures.map((f) => ({
      load: f.load,
      'requests per CPU-second': Math.round(f.requestsPerCpuSecond),
      'database commands per request': f.commandsPerRequest.toFixed(2),
      'p99 ms': f.p99
    })),
    notes: [`Requests per CPU-second, 304 / 200: ${spreadText(ratio)}.`]
  }]
}

export function httpTables (result: HttpResult): Table[] {
  return [
    ...mixTables(result),
    ...growthTables(result),
    ...languageTables(result),
    ...driverTables(result),
    ...compressionTables(result),
    ...(result.stages === undefined ? [] : [stagesTable(result.stages)]),
    ...(result.feeds === undefined ? [] : feedsTables(result.feeds)),
    ...conditionalTables(result)
  ]
}

/** This build against another (--baseline), when measured: `--write` puts it in a section of its own. */
export function baselineTable ({ baseline }: HttpResult): Table | undefined {
  if (baseline === undefined || baseline.length === 0) return undefined
  return {
    title: `This build against ${baseline[0]?.baselineName ?? 'another build'} (--baseline), interleaved rounds ` +
      '(a request of the mix alone: half the duration): CPU µs per request, and ratios this / that, ' +
      'median (min–max)',
    rows: baseline.map((b) => ({
      load: b.load,
      'this µs': Math.round(b.serviceCpuUs),
      'that µs': Math.round(b.baselineCpuUs),
      'CPU ratio': spreadText(b.cpu),
      'p99 ratio': spreadText(b.p99),
      'rps ratio': spreadText(b.rps)
    }))
  }
}
