import zlib from 'node:zlib'

/** An answer's body as sent before its Content-Encoding (zstd where node:zlib has it). */
export function decompress (encoding: string | undefined, body: Buffer): Buffer {
  switch (encoding) {
    case 'gzip': return zlib.gunzipSync(body)
    case 'br': return zlib.brotliDecompressSync(body)
    case 'zstd': return (zlib as unknown as { zstdDecompressSync: (b: Buffer) => Buffer }).zstdDecompressSync(body)
    default: return body
  }
}
