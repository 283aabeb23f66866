/**
 * Asks `condition` every `everyMs` until it holds (true) or `withinMs` has passed (false): a test
 * waits for what it expects to happen, not for a time in which it should have.
 */
export async function until (condition: () => boolean | Promise<boolean>, withinMs: number, everyMs = 20): Promise<boolean> {
  for (const end = Date.now() + withinMs; !(await condition()); await new Promise((resolve) => setTimeout(resolve, everyMs))) {
    if (Date.now() >= end) return false
  }
  return true
}
