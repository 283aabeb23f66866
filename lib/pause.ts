// A wait that a request's or a service's AbortSignal can cut short.

/** Resolves after `ms`, or at once when `signal` aborts. */
export async function pause (ms: number, signal: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => {
    const done = (): void => { clearTimeout(timer); signal.removeEventListener('abort', done); resolve() }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
