import type { Test } from 'tap'

/**
 * A test whose tool the machine lacks: skipped, saying why, on a developer's machine; failed
 * where the run promises every tool (`.ci/run` sets REQUIRE_TOOLS=1), so that a run cannot pass
 * by leaving the test out.
 */
export function withoutTool (t: Test, what: string, reason: string): void {
  if (process.env.REQUIRE_TOOLS === '1') t.fail(`${what}: ${reason}`)
  else t.skip(`${what}: ${reason}`, () => {})
}
