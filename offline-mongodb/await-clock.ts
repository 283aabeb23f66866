// How the stand-in keeps the wait of a tailable, awaitData getMore (its maxTimeMS): with real
// timers, unless a test gives a clock of its own to show when a wait ends without waiting for it.

export interface AwaitClock {
  /** Calls `fire` once `ms` have passed; returns the function that cancels it. */
  after: (ms: number, fire: () => void) => () => void
}

export const realAwaitClock: AwaitClock = {
  after: (ms, fire) => {
    // A delay beyond what setTimeout can hold would fire at once: such a wait has no timer.
    if (ms >= 2 ** 31) return () => {}
    const timer = setTimeout(fire, ms)
    return () => { clearTimeout(timer) }
  }
}
