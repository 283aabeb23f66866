// Work done once at start, after the first ping and the pool's warm-up (the change feeds' check
// of the deployment and of their collections): /ready says the service is starting until it ends.
import type { FastifyBaseLogger } from 'fastify'
import { atMost } from '../lib/pause.js'

export class StartUpWork {
  private readonly work: Array<{ what: string, run: () => Promise<unknown> }> = []
  private running: Promise<void> | undefined
  /** Whether every piece of work has ended, however it ended. */
  done = false
  private finish = (): void => {}
  /** Resolves once the work has ended. */
  readonly ended = new Promise<void>((resolve) => { this.finish = resolve })

  /** Adds work (`what` names it in the log should it fail), before the service starts. */
  add (what: string, run: () => Promise<unknown>): void {
    this.work.push({ what, run })
  }

  /** Runs the work once, side by side, each piece for at most `limitMs`; a failure is logged. */
  async run (limitMs: number, log: FastifyBaseLogger): Promise<void> {
    this.running ??= Promise.all(this.work.map(async ({ what, run }) => {
      await atMost(run(), limitMs).catch((error: unknown) => {
        log.warn(`${what} at start failed: ${(error as Error).message}; it is made again when needed`)
      })
    })).then(() => {
      this.done = true
      this.finish()
    })
    await this.running
  }
}
