// A wait that a request's or a service's AbortSignal can cut short, and waits that give up on a promise.

/** A wait of `ms` that `signal` cuts short: pause() itself, or one a test moves itself. */
export type Wait = (ms: number, signal: AbortSignal) => Promise<void>

/** Resolves after `ms`, or at once when `signal` aborts. */
export async function pause (ms: number, signal: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => {
    const done = (): void => { clearTimeout(timer); signal.removeEventListener('abort', done); resolve() }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

/** `work`'s result, or `signal`'s reason once it aborts (at once when it has); `work` is left to itself. */
export async function unlessAborted<T> (work: Promise<T>, signal: AbortSignal): Promise<T> {
  let stop = (): void => {}
  const aborted = new Promise<never>((_resolve, reject) => {
    stop = () => { reject(signal.reason) }
    if (signal.aborted) stop()
    else signal.addEventListener('abort', stop, { once: true })
  })
  try {
    return await Promise.race([work, aborted])
  } finally {
    signal.removeEventListener('abort', stop)
  }
}

/** `work`'s result, or `late()`'s error once `ms` have passed without one (`work` is left to itself). */
export async function within<T> (work: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(late()) }, ms) })
  try {
    return await Promise.race([work, expired])
  } finally {
    clearTimeout(timer)
  }
}

/** Waits for `work` at most `ms` (by `wait`), then goes on and leaves it to itself; a failure in time is thrown. */
export async function atMost (work: Promise<unknown>, ms: number, wait: Wait = pause): Promise<void> {
  const ended = new AbortController()
  try {
    await Promise.race([work, wait(ms, ended.signal)])
  } finally {
    ended.abort()
  }
}
