// The PCRE2 oracle: Debian's libpcre2-8 10.42 (MongoDB's regex engine), called through python3's
// ctypes by pcre2_oracle.py. Tests skip with a message where the library is absent.
import { spawn, spawnSync } from 'node:child_process'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { Test } from 'tap'
import { withoutTool } from './required-tool.js'

const SCRIPT = path.join(import.meta.dirname, 'pcre2_oracle.py')

/** Why the oracle cannot run here, or undefined when it can. */
export function pcre2Unavailable (): string | undefined {
  const probe = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL("libpcre2-8.so.0")'], { encoding: 'utf8' })
  if (probe.error !== undefined) return `python3 is not available (${probe.error.message})`
  if (probe.status !== 0) return 'libpcre2-8.so.0 is not installed (Debian: apt-get install libpcre2-8-0)'
  return undefined
}

export interface Pcre2Oracle {
  compile: (pattern: string, flags?: string) => Promise<{ ok: boolean, error: string | null }>
  match: (pattern: string, flags: string, subject: string) => Promise<boolean | null>
  /** The smallest match limit that lets the match finish: PCRE2's own measure of backtracking; null above `cap`. */
  steps: (pattern: string, flags: string, subject: string, cap: number) => Promise<number | null>
  close: () => void
}

export function startPcre2Oracle (): Pcre2Oracle {
  const child = spawn('python3', [SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] })
  const waiting: Array<(answer: Record<string, unknown>) => void> = []
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(JSON.parse(line)))
  const ask = async (request: Record<string, unknown>): Promise<Record<string, unknown>> =>
    await new Promise((resolve) => {
      waiting.push(resolve)
      // ASCII only on the wire: python splits lines on more than \n (U+2028, \r…).
      child.stdin.write(`${JSON.stringify(request).replace(/[\u007f-\uffff]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`)
    })
  return {
    compile: async (pattern, flags = '') =>
      await ask({ compile: pattern, flags }) as { ok: boolean, error: string | null },
    match: async (pattern, flags, subject) => (await ask({ match: pattern, flags, subject })).match as boolean | null,
    steps: async (pattern, flags, subject, cap) =>
      (await ask({ steps: pattern, flags, subject, cap })).steps as number | null,
    close: () => child.stdin.end()
  }
}

/**
 * The oracle for a test file, closed when it ends; undefined where it cannot run (test/helpers/required-tool.ts).
 */
export function pcre2OracleOrSkip (t: Test, what: string): Pcre2Oracle | undefined {
  const unavailable = pcre2Unavailable()
  if (unavailable !== undefined) {
    withoutTool(t, what, unavailable)
    return undefined
  }
  const oracle = startPcre2Oracle()
  t.teardown(oracle.close)
  return oracle
}
