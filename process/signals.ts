// Under `npm start`, one Ctrl-C reaches the service twice at once: the terminal sends it to every
// process of its foreground group, and npm forwards what it got to the script it runs
// (@npmcli/run-script's signal manager forwards SIGINT and SIGTERM). close-with-grace exits with 1
// at any second signal, so these two are taken here and a copy of the first is let go.
import type { EventEmitter } from 'node:events'

export const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM'] as const
export type ForwardedSignal = typeof FORWARDED_SIGNALS[number]

/** A signal this soon after the first is that one delivered twice; a later one is the person insisting. */
export const DUPLICATE_WINDOW_MS = 1000

export interface SignalHandlers {
  /** The first SIGINT or SIGTERM: drain and close. */
  first: (signal: ForwardedSignal) => void
  /** One more, DUPLICATE_WINDOW_MS or more after the first: exit at once. */
  again: (signal: ForwardedSignal) => void
}

/** Listens for SIGINT and SIGTERM on `target` (the process); returns the function that stops listening. */
export function onShutdownSignals (
  handlers: SignalHandlers, target: Pick<EventEmitter, 'on' | 'removeListener'> = process, now = Date.now
): () => void {
  let firstAt: number | undefined
  const listeners = FORWARDED_SIGNALS.map((signal) => [signal, () => {
    if (firstAt === undefined) {
      firstAt = now()
      handlers.first(signal)
    } else if (now() - firstAt >= DUPLICATE_WINDOW_MS) {
      handlers.again(signal)
    }
  }] as const)
  for (const [signal, listener] of listeners) target.on(signal, listener)
  return () => { for (const [signal, listener] of listeners) target.removeListener(signal, listener) }
}
