// The HTTP benchmark's figures and options (bench/http.ts runs it; bench/http-tables.ts writes them).
import type { ChildProcess } from 'node:child_process'
import type { Interface } from 'node:readline'
import type { LevelFigure } from './compression.js'
import type { DriverFigure } from './driver-process.js'
import type { FeedsResult } from './feeds.js'
import type { GcFigures } from './gc-observer.js'
import type { StageFigure } from './stages.js'
import type { Spread } from './timing.js'

/** The parts of the HTTP benchmark, in the order they run. */
export const SECTIONS = [
  'mix', 'driver', 'growth', 'language', 'compression', 'stages', 'feeds', 'conditional', 'baseline'
] as const
export type Section = typeof SECTIONS[number]

export interface HttpOptions {
  rounds: number
  duration: number
  connections: number
  scale: number
  database: 'replay' | 'direct'
  sections: ReadonlySet<Section>
  baseline?: { dist: string, name: string }
}

/**
 * A short round, for loads measured many times over (the stages, the polls, each request of the
 * mix alone): half the duration, at least 2 s.
 */
export const shortDuration = ({ duration }: HttpOptions): number => Math.max(2, duration / 2)

export type Target = 'service' | 'service in byte order' | 'floor' | 'raw floor' | 'baseline' | `stage: ${string}`

export interface RunFigure {
  target: Target
  requests: number
  rps: number
  p50: number
  p99: number
  cpuUsPerRequest: number
  errors: number
  duration: number
  gc?: GcFigures
}

export interface Server { target: Target, child: ChildProcess, url: string, lines: Interface }

export interface GrowthFigure {
  load: string
  serviceCpuUs: number
  floorCpuUs: number
  ratio: Spread
  serviceP99: number
  floorP99: number
}

/** Polls of an unchanged list (bench/http-conditional.ts), with and without If-None-Match. */
export interface ConditionalFigure {
  load: string
  requestsPerCpuSecond: number
  commandsPerRequest: number
  p99: number
}
export interface ConditionalResult { path: string, figures: ConditionalFigure[], ratio: Spread }

/**
 * A load against another of the same question (bench/http-language.ts): CPU µs per request and
 * p99, medians; ratio this / that.
 */
export interface LanguageFigure {
  load: string
  against: string
  cpuUs: number
  againstCpuUs: number
  ratio: Spread
  p99: number
  againstP99: number
}

export interface EncodingFigure {
  page: string
  encoding: string
  bytes: number
  cpuUsPerRequest: number
  cpuRatio: Spread
  p99: number
}

export interface HttpResult {
  database: { kind: string, reason: string, replay?: { recorded: number, hits: number, misses: number } }
  pinned: boolean
  mix?: {
    names: string[]
    warmUp: Record<string, number[]>
    runs: RunFigure[]
    ratios: { cpu: Spread, p99: Spread, rps: Spread, rawFloorCpu: Spread }
  }
  growth?: GrowthFigure[]
  language?: LanguageFigure[]
  stages?: StageFigure[]
  driver?: DriverFigure[]
  compression?: { levels: LevelFigure[], encodings: EncodingFigure[] }
  feeds?: FeedsResult
  conditional?: ConditionalResult
  baseline?: BaselineFigure[]
}

/** This build against another (--baseline): one load at a time, interleaved, CPU per request and p99. */
export interface BaselineFigure {
  load: string
  baselineName: string
  serviceCpuUs: number
  baselineCpuUs: number
  cpu: Spread
  p99: Spread
  rps: Spread
}
