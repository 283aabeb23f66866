// What compressing a list page costs and saves, per encoding and level: the figures behind the
// levels of plugins/compression.ts. Pages are the service's own answers (identity), compressed
// here, in this process, with node:zlib's synchronous calls, as @fastify/compress does for them.
import zlib from 'node:zlib'
import type { Table } from './report.js'
import { median, timePerCall } from './timing.js'

export interface LevelFigure {
  page: string
  identityBytes: number
  encoding: string
  level: number
  bytes: number
  share: number
  microseconds: number
}

const hasZstd = typeof (zlib as { zstdCompressSync?: unknown }).zstdCompressSync === 'function'

const COMPRESSORS: Array<{ encoding: string, levels: number[], compress: (body: Buffer, level: number) => Buffer }> = [
  { encoding: 'gzip', levels: [1, 2, 3, 4, 6, 9], compress: (body, level) => zlib.gzipSync(body, { level }) },
  {
    encoding: 'br',
    levels: [0, 1, 2, 4, 6, 9],
    compress: (body, level) =>
      zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level } })
  },
  ...(hasZstd
    ? [{
        encoding: 'zstd',
        levels: [1, 3, 6, 9],
        compress: (body: Buffer, level: number) =>
          (zlib as unknown as { zstdCompressSync: (b: Buffer, o: unknown) => Buffer }).zstdCompressSync(body, {
            params: { [(zlib.constants as Record<string, number>).ZSTD_c_compressionLevel as number]: level }
          })
      }]
    : [])
]

/** Bytes and CPU µs per compression of each page, for every encoding and level (median of 5 timings). */
export function benchCompressionLevels (pages: Array<{ name: string, body: Buffer }>): LevelFigure[] {
  const figures: LevelFigure[] = []
  for (const { name, body } of pages) {
    for (const { encoding, levels, compress } of COMPRESSORS) {
      for (const level of levels) {
        const bytes = compress(body, level).length
        const calls = Math.max(3, Math.round(2_000_000 / body.length))
        const microseconds = median(Array.from({ length: 5 }, () =>
          timePerCall(() => compress(body, level), calls) / 1000))
        figures.push({
          page: name, identityBytes: body.length, encoding, level, bytes, share: bytes / body.length, microseconds
        })
      }
    }
  }
  return figures
}

export function compressionLevelsTable (figures: LevelFigure[]): Table {
  return {
    title: 'Compression levels: each page compressed in this process (node:zlib, synchronous); ' +
      `bytes as a share of identity, µs per page${hasZstd ? '' : ' (zstd needs Node ≥ 22.15: not in this runtime)'}`,
    rows: figures.map((f) => ({
      page: f.page,
      encoding: f.encoding,
      level: f.level,
      bytes: f.bytes,
      share: f.share.toFixed(3),
      µs: Math.round(f.microseconds)
    }))
  }
}
