const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Asks `condition` every `everyMs` while `withinMs` has not passed: how long it took to hold, or
 * Infinity. A test waits for what it expects to happen, not for a time in which it should have.
 */
export async function timeUntil (
  condition: () => boolean | Promise<boolean>,
  withinMs: number,
  everyMs = 20
): Promise<number> {
  const started = Date.now()
  while (Date.now() - started < withinMs) {
    if (await condition()) return Date.now() - started
    await sleep(everyMs)
  }
  return Infinity
}

/** Whether `condition` held within `withinMs` (asked every `everyMs`). */
export async function until (
  condition: () => boolean | Promise<boolean>,
  withinMs: number,
  everyMs = 20
): Promise<boolean> {
  return await timeUntil(condition, withinMs, everyMs) < Infinity
}

/** Whether `promise` settles as fulfilled within `withinMs`. */
export async function resolvesWithin (promise: Promise<unknown>, withinMs: number): Promise<boolean> {
  let resolved = false
  promise.then(() => { resolved = true }, () => {})
  return await until(() => resolved, withinMs)
}

/**
 * Lets `turns` turns of the event loop run (setImmediate, which no fake timer holds back): what a
 * fake's reply, a timer or a wake set off runs to its next wait.
 */
export async function settle (turns = 1): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve))
}
